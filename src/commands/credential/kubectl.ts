/** `credential kubectl`: the ID or access token as kubectl's ExecCredential, refreshed first when close to expiry. */
import type { CommandContext } from '../../context.js';
import { ExitCode, IdcliError } from '../../errors.js';
import { openCredentials, requireEnvLifetime } from '../../oauth/credentials.js';
import { jwtExpiry } from '../../oauth/jwt.js';
import type { UsableRecord } from '../../oauth/session.js';
import { execApiVersion, execCredential } from './exec-credential.js';

export interface KubectlOptions {
  tokenType: 'id' | 'access';
  minTtl: number;
}

export async function kubectlCredential(o: KubectlOptions, ctx: CommandContext): Promise<void> {
  const { deps } = ctx;
  // Refused before any store is read: a kubeconfig asking for a version idcli cannot write must be fixed there.
  const apiVersion = execApiVersion(deps.env.KUBERNETES_EXEC_INFO);
  const { token, expiresAt } = await kubeToken(o, ctx);
  deps.print(execCredential(apiVersion, token, expiresAt));
}

async function kubeToken(o: KubectlOptions, ctx: CommandContext): Promise<{ token: string; expiresAt?: number }> {
  const credentials = await openCredentials(ctx);
  const now = ctx.deps.now();
  if (credentials.kind === 'env') {
    if (o.tokenType === 'id') throw noIdToken('IDCLI_ACCESS_TOKEN holds an access token only');
    if (credentials.expiresAt !== undefined) requireEnvLifetime(credentials, o.minTtl, now);
    return { token: credentials.token, expiresAt: credentials.expiresAt };
  }
  const { session } = credentials;
  const record = await session.valid(o.minTtl);
  if (o.tokenType === 'access') return { token: record.accessToken, expiresAt: record.expiresAt };
  const id = idToken(record);
  // The ID token may expire before the access token it came with: its own expiry decides the refresh too.
  if (id.expiresAt - now > o.minTtl * 1000) return id;
  return idToken(await session.valid(o.minTtl, true));
}

/** The ID token with its own `exp`, or the access token's expiry when it shows none. */
function idToken(record: UsableRecord): { token: string; expiresAt: number } {
  const token = record.idToken;
  if (token === undefined) throw noIdToken('the stored sign-in holds no ID token');
  const exp = jwtExpiry(token);
  // valid() hands out only a record with an expiry; 0 would only make the next run refresh.
  return { token, expiresAt: 'at' in exp ? exp.at : (record.expiresAt ?? 0) };
}

function noIdToken(why: string): IdcliError {
  return new IdcliError('ID_TOKEN_MISSING', `no ID token to give kubectl: ${why}`, ExitCode.AUTH, {
    hint: 'run `idcli login`, or pass --token-type access',
  });
}

/** `idcli token`: a valid access token on stdout for scripts, refreshed with Serial PKCE when needed. */
import type { TokenOptions } from '../cmd/token.js';
import type { CommandContext } from '../context.js';
import { usageError } from '../errors.js';
import { openCredentials, requireEnvLifetime } from '../oauth/credentials.js';
import { secondsLeft } from '../oauth/session.js';
import type { CredentialRecord } from '../store/record.js';
import { MIN_TTL_SEC } from '../token-rules.js';

export async function runToken(opts: TokenOptions, ctx: CommandContext): Promise<void> {
  if (opts.json && opts.header) throw usageError('--json and --header cannot be used together');
  const { deps } = ctx;
  const credentials = await openCredentials(ctx);
  let record: Partial<CredentialRecord> & { accessToken: string };
  if (credentials.kind === 'env') {
    // Nothing can refresh a token from the environment, so the default margin, which only decides when to refresh,
    // does not apply to it: only a --min-ttl the user gave is a guard, checked against the token's JWT expiry.
    if (opts.minTtl !== undefined) requireEnvLifetime(credentials, opts.minTtl, deps.now());
    // Beyond its value, only the expiry of a JWT is known of it.
    record = { accessToken: credentials.token, expiresAt: credentials.expiresAt };
  } else {
    record = await credentials.session.valid(opts.minTtl ?? MIN_TTL_SEC, opts.refresh);
  }
  const out = {
    access_token: record.accessToken,
    token_type: record.tokenType ?? 'Bearer',
    expires_in: record.expiresAt === undefined ? null : secondsLeft(record, deps.now()),
    expires_at: record.expiresAt === undefined ? null : new Date(record.expiresAt).toISOString(),
    scope: record.scope ?? null,
    id_token: record.idToken ?? null,
  };
  // Never the refresh token or the verifier: they stay in the store (docs/cli.md, "token").
  // The header form lets a script hand the token to curl through a pipe (`curl -H @-`), never through argv.
  if (opts.header) deps.print(`Authorization: Bearer ${out.access_token}\n`);
  else deps.print(opts.json ? `${JSON.stringify(out, null, 2)}\n` : `${out.access_token}\n`);
}

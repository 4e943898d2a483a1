import type { TokenSource } from '../deps.js';
import { IdcliError, ExitCode } from '../errors.js';
import { jwtExpiry } from './jwt.js';
import type { SessionContext } from '../context.js';
import { openSession, type Session } from './session.js';

/** Where this run's access token comes from: IDCLI_ACCESS_TOKEN is used as is, with no store read or written. */
export type Credentials = EnvCredentials | { kind: 'stored'; session: Session };

export interface EnvCredentials {
  kind: 'env';
  token: string;
  /** Epoch ms from the token's own `exp` when it is a JWT that has one; nothing else about it is known. */
  expiresAt: number | undefined;
  /** Why expiresAt is unknown, when it is. */
  expiryUnknown?: string;
}

export async function openCredentials(ctx: SessionContext): Promise<Credentials> {
  const token = ctx.settings.accessToken;
  if (token !== undefined) {
    const expiry = jwtExpiry(token);
    if ('at' in expiry) return { kind: 'env', token, expiresAt: expiry.at };
    return { kind: 'env', token, expiresAt: undefined, expiryUnknown: expiry.unknown };
  }
  return { kind: 'stored', session: await openSession(ctx) };
}

const FROM_ENV = 'the access token in IDCLI_ACCESS_TOKEN';

/** `token --min-ttl n` with IDCLI_ACCESS_TOKEN: exit 3 when it expires within n s or shows no expiry. */
export function requireEnvLifetime(env: EnvCredentials, minTtlSec: number, now: number): void {
  const hint = { hint: 'provide a fresh one, or unset IDCLI_ACCESS_TOKEN to use the stored sign-in' };
  if (env.expiresAt === undefined) {
    throw new IdcliError(
      'ENV_TOKEN_EXPIRY_UNKNOWN',
      `the expiry of ${FROM_ENV} cannot be known (${env.expiryUnknown ?? 'not a JWT with an exp claim'}), so --min-ttl ${minTtlSec} cannot be met`,
      ExitCode.AUTH,
      { hint: 'leave out --min-ttl to use it without the check' },
    );
  }
  const leftMs = env.expiresAt - now;
  if (leftMs > minTtlSec * 1000) return;
  const at = new Date(env.expiresAt).toISOString();
  if (leftMs <= 0) throw new IdcliError('ENV_TOKEN_EXPIRED', `${FROM_ENV} expired at ${at}`, ExitCode.AUTH, hint);
  throw new IdcliError(
    'ENV_TOKEN_BELOW_MIN_TTL',
    `${FROM_ENV} expires in ${Math.floor(leftMs / 1000)} s (at ${at}), within --min-ttl ${minTtlSec}`,
    ExitCode.AUTH,
    hint,
  );
}

/** A 401 with IDCLI_ACCESS_TOKEN cannot be fixed by refreshing, so it is an authentication error. */
export function staticTokenSource(token: string): TokenSource {
  return {
    get: () => Promise.resolve(token),
    refresh: () =>
      Promise.reject(
        new IdcliError('ENV_TOKEN_REJECTED', `${FROM_ENV} was rejected`, ExitCode.AUTH, {
          hint: 'provide a fresh one or unset IDCLI_ACCESS_TOKEN to use the stored sign-in',
        }),
      ),
  };
}

export async function openTokenSource(ctx: SessionContext): Promise<TokenSource> {
  const credentials = await openCredentials(ctx);
  return credentials.kind === 'env' ? staticTokenSource(credentials.token) : credentials.session;
}

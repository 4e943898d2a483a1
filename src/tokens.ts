import type { TokenSource } from './deps.js';
import { IdcliError, ExitCode } from './errors.js';
import { openSession, type Session, type SessionContext } from './oauth/session.js';

/**
 * Where this run's access token comes from. IDCLI_ACCESS_TOKEN short-circuits everything: used as is, no store
 * read or written. This is the one place that decides it; `token` and `status` describe what it decided.
 */
export type Credentials = { kind: 'env'; token: string } | { kind: 'stored'; session: Session };

export async function openCredentials(ctx: SessionContext): Promise<Credentials> {
  if (ctx.settings.accessToken !== undefined) return { kind: 'env', token: ctx.settings.accessToken };
  return { kind: 'stored', session: await openSession(ctx) };
}

/** A 401 with IDCLI_ACCESS_TOKEN cannot be fixed by refreshing, so it is an authentication error. */
export function staticTokenSource(token: string): TokenSource {
  return {
    async get() {
      return token;
    },
    async refresh() {
      throw new IdcliError('the access token in IDCLI_ACCESS_TOKEN was rejected', ExitCode.AUTH, {
        hint: 'provide a fresh one or unset IDCLI_ACCESS_TOKEN to use the stored sign-in',
      });
    },
  };
}

export async function openTokenSource(ctx: SessionContext): Promise<TokenSource> {
  const credentials = await openCredentials(ctx);
  return credentials.kind === 'env' ? staticTokenSource(credentials.token) : credentials.session;
}

import type { CommandContext } from './context.js';
import type { TokenSource } from './deps.js';
import { IdcliError, ExitCode } from './errors.js';

/**
 * IDCLI_ACCESS_TOKEN short-circuits everything (cli-contract): used as is, no store read or written. A 401 with it
 * cannot be fixed by refreshing, so it is an authentication error.
 */
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

export async function openTokenSource(ctx: Omit<CommandContext, 'tokens'>): Promise<TokenSource> {
  if (ctx.settings.accessToken !== undefined) return staticTokenSource(ctx.settings.accessToken);
  const { openSession } = await import('./oauth/session.js');
  return openSession(ctx);
}

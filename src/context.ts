import type { Deps, TokenSource } from './deps.js';
import type { Settings } from './config.js';

/** What `invocation.context()` resolves to; `token` and `status` open the credentials themselves. */
export interface CommandContext {
  deps: Deps;
  settings: Settings;
  /** Opened on demand, so commands that need no token never load the store or the OAuth client. */
  tokens: () => Promise<TokenSource>;
}

/** What sign-in, refresh and the token endpoint client need of a command's context: `deps` and the settings. */
export type SessionContext = Pick<CommandContext, 'deps' | 'settings'>;

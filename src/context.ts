import type { Deps, TokenSource } from './deps.js';
import type { Settings } from './config.js';

/**
 * What a command's `invocation.context()` resolves to: the edges, the resolved settings, and a lazy token source.
 * `token` and `status`, which describe where the token comes from, open the credentials themselves
 * (oauth/credentials.ts).
 */
export interface CommandContext {
  deps: Deps;
  settings: Settings;
  /** Opened on demand, so commands that need no token never load the store or the OAuth client. */
  tokens: () => Promise<TokenSource>;
}

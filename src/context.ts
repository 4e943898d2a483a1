import type { Deps, TokenSource } from './deps.js';
import type { Settings } from './config.js';

/** What every command's run function receives: the edges, the resolved settings, and a lazy token source. */
export interface CommandContext {
  deps: Deps;
  settings: Settings;
  /** Opened on demand, so commands that need no token never load the store or the OAuth client. */
  tokens: () => Promise<TokenSource>;
}

import type { Deps, TokenSource } from './deps.js';
import type { Settings } from './config.js';
import type { Credentials } from './tokens.js';

/** What every command's run function receives: the edges, the resolved settings, and lazy credentials. */
export interface CommandContext {
  deps: Deps;
  settings: Settings;
  /** Opened on demand, so commands that need no token never load the store or the OAuth client. */
  tokens: () => Promise<TokenSource>;
  /** Where the token comes from (IDCLI_ACCESS_TOKEN or the stored sign-in), for the commands that describe it. */
  credentials: () => Promise<Credentials>;
}

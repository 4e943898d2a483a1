/**
 * $XDG_CACHE_HOME/idcli (else ~/.cache/idcli), where the single executable keeps its keychain addon. What is read
 * back is run, so it holds to the private-path rule (private-path.ts) on every directory from `/` down, checked
 * before anything is created in it, like the config directory.
 */
import { mkdirSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { checkPrivateDir, PRIVATE_DIR_MODE, resolveTrusted } from './private-path.js';

export const CACHE_DIR_OWN = 'set XDG_CACHE_HOME to a directory of your own that only you may write';

/**
 * The directory, created 0700 where missing; undefined without an absolute XDG_CACHE_HOME or HOME. Exit 2 (thrown)
 * when another user could change what is in it; open to others, it is tightened to 0700 and `warn` is told.
 */
export function privateCacheDir(
  env: NodeJS.ProcessEnv = process.env,
  warn: (msg: string) => void = () => {},
): string | undefined {
  const xdg = env.XDG_CACHE_HOME;
  // A relative XDG_CACHE_HOME or HOME is ignored, as for the config directory (docs/cli.md).
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : undefined;
  const base = xdg && isAbsolute(xdg) ? xdg : home ? join(home, '.cache') : undefined;
  if (base === undefined) return undefined;
  const check = { warn, hint: CACHE_DIR_OWN, follow: true };
  // The user's own links (dotfiles) are followed; every directory on the way is proven safe before mkdir, so what
  // it creates under them no other user can replace.
  const dir = resolveTrusted(join(base, 'idcli'), CACHE_DIR_OWN);
  if (!checkPrivateDir(dir, check)) {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    checkPrivateDir(dir, check);
  }
  return dir;
}

/**
 * $XDG_CACHE_HOME/idcli (else ~/.cache/idcli), where the single executable keeps its keychain addon. What is read
 * back is run, so the rule is stricter than private-path.ts's: the user's own, closed to others, never under a
 * sticky shared directory.
 */
import { lstatSync, mkdirSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { ownedByMe, PRIVATE_DIR_MODE } from './private-path.js';

/** The directory, created 0700 where missing; undefined when there is none this user alone controls. */
export function privateCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const xdg = env.XDG_CACHE_HOME;
  // A relative XDG_CACHE_HOME or HOME is ignored, as for the config directory (docs/cli.md).
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : undefined;
  const base = xdg && isAbsolute(xdg) ? xdg : home ? join(home, '.cache') : undefined;
  if (base === undefined) return undefined;
  const dir = join(base, 'idcli');
  try {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const own = lstatSync(dir);
    if (!own.isDirectory() || !ownedByMe(own) || (own.mode & 0o077) !== 0) return undefined;
    const parent = statSync(base);
    if ((parent.mode & 0o022) !== 0 || !(ownedByMe(parent) || parent.uid === 0)) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

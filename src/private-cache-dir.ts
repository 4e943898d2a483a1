/**
 * idcli's directory in the user's cache ($XDG_CACHE_HOME/idcli, else ~/.cache/idcli), where the single executable
 * keeps its keychain addon (src/exe/keyring.ts). What is read back from it is run as this user, so it is used only
 * when it is this user's own and closed to others, and sits in a directory no other user can rename it out of
 * (ssh judges a key file the same way); never a shared /tmp path: stricter than the rule of private-path.ts, which
 * takes a sticky directory, since what is kept here is code.
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

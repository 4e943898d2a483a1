/**
 * idcli's directory in the user's cache ($XDG_CACHE_HOME/idcli, else ~/.cache/idcli), where the single executable
 * keeps its keychain addon (src/exe/keyring.ts). What is read back from it is run as this user, so it is used only
 * when it is this user's own and closed to others, and sits in a directory no other user can rename it out of
 * (ssh judges a key file the same way); never a shared /tmp path.
 */
import { lstatSync, mkdirSync, statSync, type Stats } from 'node:fs';
import { isAbsolute, join } from 'node:path';

/** The directory, created 0700 where missing; undefined when there is none this user alone controls. */
export function privateCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const xdg = env.XDG_CACHE_HOME;
  // A relative XDG_CACHE_HOME or HOME is ignored, as for the config directory (docs/cli.md).
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : undefined;
  const base = xdg && isAbsolute(xdg) ? xdg : home ? join(home, '.cache') : undefined;
  if (base === undefined) return undefined;
  const dir = join(base, 'idcli');
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const own = lstatSync(dir);
    if (!own.isDirectory() || !isMine(own) || (own.mode & 0o077) !== 0) return undefined;
    const parent = statSync(base);
    if ((parent.mode & 0o022) !== 0 || !(isMine(parent) || parent.uid === 0)) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

/** Owned by this process's user; Windows has no uids, and there the profile directory is the user's. */
export function isMine(st: Stats): boolean {
  const uid = process.getuid?.();
  return uid === undefined || st.uid === uid;
}

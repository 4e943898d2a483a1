/**
 * @napi-rs/keyring in the single executable: Node loads an addon only from a file, so the asset is written to the
 * private cache by its SHA-256, opened once, checked through that descriptor (owner, mode, bytes) and loaded through
 * it, so what runs is what was checked; else "no keychain". A refused cache directory is thrown as the private-path
 * rule's error, and a tightened one told in `notices`, for the keychain client to say on stderr.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { getAsset } from 'node:sea';
import { privateCacheDir } from '../private-cache-dir.js';
import { openNoFollow, ownedByMe } from '../private-path.js';
import { errCode } from '../shape.js';

type KeyringModule = typeof import('@napi-rs/keyring');

declare const IDCLI_KEYRING_ASSET: string;
declare const IDCLI_KEYRING_SHA256: string;

const ADDON = `keyring-${IDCLI_KEYRING_SHA256}.node`;
/** A temp file an extraction writes before renaming it into place; its pid tells whether that run is still alive. */
const TEMP = /^keyring-[0-9a-f]{64}\.node\.([0-9]+)\.tmp$/;

const told: string[] = [];
const addon = loadAddon((msg) => told.push(msg));
export const { AsyncEntry, Entry, findCredentials, findCredentialsAsync } = addon;
/** What loading had to say (the cache directory tightened), for the keychain client to tell on stderr. */
export const notices: readonly string[] = told;

function loadAddon(warn: (msg: string) => void): KeyringModule {
  // A refused cache directory is thrown as it is (exit 2's message and hint), for the client to say why.
  const dir = privateCacheDir(process.env, warn);
  if (dir === undefined) throw new Error('no cache directory (neither XDG_CACHE_HOME nor HOME) for the keychain addon');
  removeStaleTemps(dir);
  const path = join(dir, ADDON);
  let fd = openChecked(path);
  if (fd === undefined) {
    writeAddon(path);
    fd = openChecked(path);
    if (fd === undefined) throw new Error(`the keychain addon written to ${path} does not check out`);
  }
  try {
    const module = { exports: {} as KeyringModule }; // filled in by the addon's loader
    // The descriptor checked, not the name again: the executable is built for Linux only, where /proc has it.
    process.dlopen(module, `/proc/self/fd/${fd}`);
    return module.exports;
  } finally {
    closeSync(fd);
  }
}

/**
 * The addon opened once: a regular file of this user's, closed to others, holding the bytes this executable carries,
 * checked through the descriptor that is loaded; undefined when it is not.
 */
function openChecked(path: string): number | undefined {
  let fd: number;
  try {
    fd = openNoFollow(path);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (st.isFile() && ownedByMe(st) && (st.mode & 0o077) === 0) {
      const digest = createHash('sha256').update(readFileSync(fd)).digest('hex');
      if (digest === IDCLI_KEYRING_SHA256) return fd;
    }
  } catch {
    // Unreadable is as good as wrong: it is written again.
  }
  closeSync(fd);
  return undefined;
}

/** Written beside its final name and renamed into place, so a run never loads a half-written file. */
function writeAddon(path: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  try {
    const fd = openSync(tmp, flags, 0o500);
    try {
      writeFileSync(fd, new Uint8Array(getAsset(IDCLI_KEYRING_ASSET)));
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** The temp files of extractions killed before their rename: their pid is gone, and nothing else removes them. */
function removeStaleTemps(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(TEMP.exec(name)?.[1]);
    if (!Number.isSafeInteger(pid) || pid === process.pid || alive(pid)) continue;
    rmSync(join(dir, name), { force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errCode(err) !== 'ESRCH';
  }
}

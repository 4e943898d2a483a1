/**
 * @napi-rs/keyring in the single executable: Node loads an addon only from a file, so the asset is written to the
 * private cache by its SHA-256 and loaded once owner, mode and bytes check out; else "no keychain".
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, lstatSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getAsset } from 'node:sea';
import { privateCacheDir } from '../private-cache-dir.js';
import { ownedByMe } from '../private-path.js';

type KeyringModule = typeof import('@napi-rs/keyring');

declare const IDCLI_KEYRING_ASSET: string;
declare const IDCLI_KEYRING_SHA256: string;

const addon = loadAddon();
export const { AsyncEntry, Entry, findCredentials, findCredentialsAsync } = addon;

function loadAddon(): KeyringModule {
  const dir = privateCacheDir();
  if (dir === undefined) throw new Error('no private cache directory of this user to put the keychain addon in');
  const path = join(dir, `keyring-${IDCLI_KEYRING_SHA256}.node`);
  if (!isTrusted(path)) {
    writeAddon(path);
    if (!isTrusted(path)) throw new Error(`the keychain addon written to ${path} does not check out`);
  }
  const module = { exports: {} as KeyringModule }; // filled in by the addon's loader
  process.dlopen(module, path);
  return module.exports;
}

/** A regular file of this user's, closed to others, holding the bytes this executable carries. */
function isTrusted(path: string): boolean {
  try {
    const st = lstatSync(path);
    if (!st.isFile() || !ownedByMe(st) || (st.mode & 0o077) !== 0) return false;
    return createHash('sha256').update(readFileSync(path)).digest('hex') === IDCLI_KEYRING_SHA256;
  } catch {
    return false;
  }
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

/** Credential records as files under `<configDir>/credentials/`, one per account (see pathFor). */
import { closeSync, constants, fchmodSync, fstatSync, lstatSync, openSync, readFileSync, type Stats } from 'node:fs';
import { join, sep } from 'node:path';
import { CONFIG_DIR_ELSEWHERE, CONFIG_DIR_OWN } from '../config-file.js';
import { IdcliError, usageError } from '../errors.js';
import { fsFault, type FsFaultAt } from '../fs-faults.js';
import { errCode } from '../shape.js';
import { createPrivateFile, PRIVATE_FILE_MODE, privateTempName, replacePrivateFile, syncDir } from '../private-file.js';
import { checkPrivateDir, PRIVATE_DIR_MODE, refuseForeignOwner, tightenMode } from '../private-path.js';
import { processRunning } from './pid.js';
import type { CommitHooks, CredentialStore, WriteOptions } from './interface.js';
import type { CredentialKey, CredentialRecord } from './record.js';
import { accountName, decodeRecord, encodeRecord, recordFrom } from './record.js';

const IS_POSIX = process.platform !== 'win32';
// O_NOFOLLOW makes open() fail with ELOOP on a symlink, so a planted link cannot redirect reads of the record.
const O_NOFOLLOW = IS_POSIX ? constants.O_NOFOLLOW : 0;
// O_NONBLOCK: a FIFO planted as the record must be refused by the fstat below, not wait forever for a writer.
const O_NONBLOCK = IS_POSIX ? constants.O_NONBLOCK : 0;
/** A temp file this old has no live writer, whatever its pid says (a pid can be reused, or be another host's). */
const ORPHAN_TEMP_AGE_MS = 60 * 60 * 1000;

export interface FileStoreOptions {
  configDir: string;
  warn?: (msg: string) => void;
  notice?: string;
  hooks?: CommitHooks;
}

/** Room for the prefix, `.json` and a temp suffix within a 255-byte file name. */
const MAX_PLAIN_NAME = 200;

/** Loaded on first use: only writes and deletes need it, and a cached read should not pay for its load. */
const fsp = () => import('node:fs/promises');

export class FileStore implements CredentialStore {
  readonly kind = 'file' as const;
  readonly dir: string;
  readonly notice?: string;
  readonly #warn: (msg: string) => void;
  readonly #hooks: CommitHooks;

  constructor(opts: FileStoreOptions) {
    this.dir = join(opts.configDir, 'credentials');
    this.#warn = opts.warn ?? (() => {});
    this.#hooks = opts.hooks ?? {};
    if (opts.notice !== undefined) this.notice = opts.notice;
  }

  describe(): string {
    return `file ${this.dir}${sep}…`;
  }

  /** base64url: injective, safe on every filesystem, no node:crypto load; a name too long is the SHA-256 instead. */
  async pathFor(key: CredentialKey): Promise<string> {
    const name = Buffer.from(accountName(key), 'utf8').toString('base64url');
    if (name.length <= MAX_PLAIN_NAME) return join(this.dir, `a-${name}.json`);
    const { createHash } = await import('node:crypto');
    return join(this.dir, `h-${createHash('sha256').update(accountName(key)).digest('hex')}.json`);
  }

  /** Synchronous underneath: `idcli token` with a cached token should not pay for the thread pool's start. */
  async read(key: CredentialKey): Promise<CredentialRecord | null> {
    const path = await this.pathFor(key);
    if (!this.#inspectDir()) return null;
    if (!IS_POSIX) this.#existingRecord(path); // no O_NOFOLLOW there
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch (err) {
      const code = errCode(err);
      if (code === 'ENOENT') return null;
      if (code === 'ELOOP') throw symlinkRefused(path);
      if (code === 'EACCES' || code === 'EPERM') throw unreadable(path, err);
      throw this.#fault(err, 'read', path);
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) throw notARecord(path);
      refuseForeignOwner(path, st);
      if (IS_POSIX && (st.mode & 0o077) !== 0) {
        const told = tightenMode(path, st, PRIVATE_FILE_MODE, 'readable', () => fchmodSync(fd, PRIVATE_FILE_MODE));
        this.#warn(`${told.message} — consider signing in again`);
      }
      return recordFrom(path, () => decodeRecord(readFileSync(fd, 'utf8')));
    } catch (err) {
      if (err instanceof IdcliError) throw err; // a CredentialRecordError among them
      throw this.#fault(err, 'read', path);
    } finally {
      closeSync(fd);
    }
  }

  /** A write-and-remove probe: permission bits alone cannot tell a read-only mount, a full disk or an ACL. */
  async checkWritable(key: CredentialKey): Promise<void> {
    const path = await this.pathFor(key);
    await this.#ensureDir();
    // The probe cannot see what is at the record's own name: a directory there fails only the final rename.
    this.#existingRecord(path);
    const { unlink } = await fsp();
    const probe = await privateTempName(path);
    try {
      await createPrivateFile(probe, '\n');
    } catch (err) {
      throw this.#fault(err, 'write', path);
    } finally {
      // A probe left behind is swept like any dead writer's temp file.
      await unlink(probe).catch(() => {});
    }
  }

  async write(key: CredentialKey, record: CredentialRecord, opts: WriteOptions = {}): Promise<void> {
    const path = await this.pathFor(key);
    await this.#ensureDir();
    const creates = !this.#existingRecord(path);
    await this.#removeOrphanTemps(path);
    try {
      const beforeCommit = async () => {
        await this.#hooks.beforeCommit?.();
        await opts.beforeCommit?.();
      };
      await replacePrivateFile(path, `${encodeRecord(record)}\n`, { durable: true, beforeCommit });
    } catch (err) {
      if (err instanceof IdcliError) throw err;
      throw this.#fault(err, 'write', path);
    }
    if (this.notice !== undefined && (creates || opts.signIn)) this.#warn(this.notice);
  }

  async delete(key: CredentialKey): Promise<boolean> {
    const path = await this.pathFor(key);
    // Checked as reads check it: through a symlinked directory, unlink would remove a file in the link's target.
    if (!this.#inspectDir('delete')) return false;
    // Signing out must not leave the tokens of a writer killed mid-write behind.
    await this.#removeOrphanTemps(path);
    try {
      // unlink removes a symlink itself, never its target, so the record's own name needs no symlink check.
      await (await fsp()).unlink(path);
    } catch (err) {
      if (errCode(err) === 'ENOENT') return false;
      // A directory in the record's place (EISDIR, or EPERM as POSIX allows) is not ours to remove recursively.
      if (lstatOrUndefined(path)?.isDirectory()) throw notARecord(path);
      throw this.#fault(err, 'delete', path);
    }
    await syncDir(this.dir);
    return true;
  }

  #fault(err: unknown, doing: FsFaultAt['doing'], path: string): IdcliError {
    return fsFault(err, { doing, path, dir: this.dir, orElse: CONFIG_DIR_ELSEWHERE });
  }

  async #ensureDir(): Promise<void> {
    // Checked before it is made too: nothing is created under a directory another user could swap.
    if (this.#inspectDir('create')) return;
    try {
      await (await fsp()).mkdir(this.dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    } catch (err) {
      // EEXIST here means something other than a directory is in the way; the checks below name it.
      if (errCode(err) !== 'EEXIST') throw this.#fault(err, 'create', this.dir);
    }
    this.#inspectDir('create');
  }

  /** False when the directory does not exist; refuses what the private-path rule refuses; tightens its mode. */
  #inspectDir(doing: FsFaultAt['doing'] = 'read'): boolean {
    try {
      return checkPrivateDir(this.dir, { warn: this.#warn, hint: CONFIG_DIR_OWN, follow: false });
    } catch (err) {
      if (err instanceof IdcliError) throw err;
      throw this.#fault(err, doing, this.dir);
    }
  }

  /** Whether a record exists at `path`; refuses anything there but a regular file, a dangling symlink included. */
  #existingRecord(path: string): boolean {
    let st: Stats;
    try {
      st = lstatSync(path);
    } catch (err) {
      if (errCode(err) !== 'ENOENT') throw this.#fault(err, 'read', path);
      return false;
    }
    if (st.isSymbolicLink()) throw symlinkRefused(path);
    if (!st.isFile()) throw notARecord(path);
    return true;
  }

  /** Removes temp files (with tokens) of writers killed before their rename; callers hold the lock, as writers do. */
  async #removeOrphanTemps(path: string): Promise<void> {
    const prefix = `${path.slice(this.dir.length + 1)}.`;
    const { lstat, readdir, unlink } = await fsp();
    const names = await readdir(this.dir).catch((): string[] => []);
    // eslint-disable-next-line no-restricted-properties -- compared with other processes' file times, on this machine.
    const now = Date.now();
    for (const name of names) {
      if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
      const tmp = join(this.dir, name);
      const writer = Number(name.slice(prefix.length).split('.')[0]);
      const st = await lstat(tmp).catch(() => null);
      if (st && (!processRunning(writer) || now - st.mtimeMs > ORPHAN_TEMP_AGE_MS)) await unlink(tmp).catch(() => {});
    }
  }
}

/** A local fault the user removes (exit 2): signing in again would meet the same thing. */
function symlinkRefused(path: string): IdcliError {
  return usageError(
    'SYMLINK_REFUSED',
    `refusing to follow the symbolic link ${path}`,
    'remove the link and run `idcli login`',
  );
}

/** Another user's record is refused naming its owner; one of ours we may not read needs its mode mended (exit 2). */
function unreadable(path: string, err: unknown): IdcliError {
  // Where not even its owner can be read (a directory we may not search), the fault says what failed.
  const st = lstatOrUndefined(path);
  if (st) refuseForeignOwner(path, st);
  return fsFault(err, { doing: 'read', path, dir: path, orElse: 'or remove it and run `idcli login`' });
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function notARecord(path: string): IdcliError {
  return usageError('PATH_NOT_REGULAR', `${path} is not a regular file`, 'remove it and run `idcli login`');
}

/**
 * A cross-process lock file, held across read → refresh → save so that no single-use refresh token is sent twice.
 * A waiter that judged a lock stale must not delete a fresh one another waiter created meanwhile, so every removal
 * happens under a short-lived "reaper" lock and re-reads the lock before unlinking; creation cannot overwrite.
 * A holder still running on this host keeps its lock however long it is paused (Ctrl-Z, SIGSTOP, a frozen VM): had
 * it lost the lock unawares, it would resume and send a spent refresh token, or save a file it read before.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, link, lstat, mkdir, open, readdir, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { type Clock, sleep, systemClock } from '../clock.js';
import { seconds } from '../duration.js';
import { CONFIG_DIR_ELSEWHERE, CONFIG_DIR_OWN } from '../config-file.js';
import { checkPrivateDir } from '../private-path.js';
import { ExitCode, IdcliError, interrupted, usageError } from '../errors.js';
import { fsFault, type FsFaultAt } from '../fs-faults.js';
import { errCode, isJsonObject } from '../shape.js';
import { createPrivateFile, privateTempName } from '../private-file.js';
import { processRunning, processStart, recordedProcessRunning } from './pid.js';
import { accountName, type CredentialKey } from './record.js';

/** staleMs decides how soon a lock whose owner cannot be checked by pid and start time is taken over after a crash. */
const DEFAULT_LOCK_TIMEOUT_MS = 60_000;
const DEFAULT_LOCK_STALE_MS = 10_000;
// O_NONBLOCK: a FIFO in the lock's place must be refused (see snapshot), not block a thread and the run forever.
const O_NONBLOCK = process.platform === 'win32' ? 0 : constants.O_NONBLOCK;
// O_NOFOLLOW: a symbolic link in the lock's place is refused; a dangling one followed would make runs wait for nobody.
const O_NOFOLLOW = process.platform === 'win32' ? 0 : constants.O_NOFOLLOW;
/** A reaper is held for two file operations; one this old belongs to a process that died inside them. */
const REAPER_STALE_MS = 5_000;
const MIN_POLL_MS = 10;
const MAX_POLL_MS = 200;

export interface LockOptions {
  /** How long one holder may keep the lock; the wait starts over each time the lock changes hands. */
  timeoutMs?: number;
  /** A lock whose owner cannot be checked (another host, no start time) is abandoned once untouched this long. */
  staleMs?: number;
  signal?: AbortSignal;
  /** Called once, when the lock is found held and this process starts to wait; `who` as holderName() says. */
  onWait?: (who: string) => void;
  /** A limit on the whole wait (`login --timeout`): past `at` (`clock` time) it ends with `error(holderName)`. */
  waitLimit?: { at: number; error: (who: string) => Error };
  /**
   * The clock of the wait (its polls and deadlines), of a lock's age and of the heartbeat; the machine's by default.
   * Ages compare it with the files' mtimes, so a run's clock is the machine's, or one that starts from it (a test's).
   */
  clock?: Clock;
  /** What the lock guards, as its messages name it ("the configuration"); default "these credentials". */
  guards?: string;
}

/** Given to the holder: `confirm` throws `lost` unless the lock file is still this holder's. */
export interface Lease {
  confirm(lost: (lockPath: string) => Error): Promise<void>;
}

interface Owner {
  pid: number;
  host: string;
  createdAt: number;
  token: string;
  /** processStart of the pid: tells the holder from a later process given the same pid. */
  start?: string;
}

interface Snapshot {
  text: string;
  mtimeMs: number;
  owner: Owner | null;
}

export function lockPathFor(configDir: string, key: CredentialKey): string {
  return join(configDir, 'locks', `${createHash('sha256').update(accountName(key)).digest('hex')}.lock`);
}

/** `config set` and `unset` take turns on this one (a name no credential's hash can take) while they change config.json. */
export function configLockPath(configDir: string): string {
  return join(configDir, 'locks', 'config.lock');
}

export async function withLock<T>(
  lockPath: string,
  fn: (lease: Lease) => Promise<T>,
  opts: LockOptions = {},
): Promise<T> {
  const { owner, release } = await acquire(lockPath, opts, opts.clock ?? systemClock);
  const lease: Lease = {
    async confirm(lost) {
      const now = await snapshot(lockPath).catch(() => null);
      if (now?.owner?.token !== owner.token) throw lost(lockPath);
    },
  };
  try {
    return await fn(lease);
  } finally {
    await release();
  }
}

interface Held {
  owner: Owner;
  release: () => Promise<void>;
}

async function acquire(lockPath: string, opts: LockOptions, clock: Clock): Promise<Held> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const staleMs = opts.staleMs ?? DEFAULT_LOCK_STALE_MS;
  const dir = dirname(lockPath);
  try {
    // Another user's locks directory, or a link in its place, could hold a lock forever or see who signs in; it is
    // checked before it is made, so that nothing is created under a directory another user could swap.
    const linkHint = `remove the link (idcli makes ${dir} itself) and run the command again`;
    const check = { warn: () => {}, hint: CONFIG_DIR_OWN, follow: false, linkHint };
    if (!checkPrivateDir(dir, check)) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      checkPrivateDir(dir, check);
    }
  } catch (err) {
    if (err instanceof IdcliError) throw err;
    // The locks directory not there yet stands for the nearest one above it (see fs-faults.ts).
    throw lockFsError('create', dir, err, dir);
  }
  await sweepDeadTemps(lockPath, clock);
  const owner = newOwner(clock);
  let waitingOn: string | null | undefined;
  let deadline = clock.now() + timeoutMs;
  for (let round = 0; ; round++) {
    if (opts.signal?.aborted) throw interrupted();
    // After the first try, only read until the lock looks free: creating a file on every poll would load the disk.
    const seen = round === 0 ? null : await snapshot(lockPath);
    if (seen === null) {
      const fh = await createExclusive(lockPath, owner);
      if (fh) return { owner, release: hold(lockPath, fh, owner, staleMs, timeoutMs, clock) };
    }
    const holder = seen ?? (await snapshot(lockPath));
    const stale = (snap: Snapshot) => isStale(snap, staleMs, clock);
    if (holder && stale(holder) && (await removeUnder(lockPath, stale, deadline, clock, opts.signal))) continue;
    const id = holderId(holder);
    if (id !== waitingOn) {
      if (waitingOn === undefined) opts.onWait?.(holderName(holder));
      waitingOn = id;
      deadline = clock.now() + timeoutMs;
    }
    const now = clock.now();
    if (opts.waitLimit && now >= opts.waitLimit.at) throw opts.waitLimit.error(holderName(holder));
    if (now >= deadline) throw timeoutError(lockPath, timeoutMs, holder, opts.guards ?? 'these credentials');
    const pause = Math.min(pollDelay(round), Math.max(0, (opts.waitLimit?.at ?? Infinity) - now));
    await sleep(clock, pause, opts.signal).catch(() => {});
  }
}

/** The token tells this process's own lock file from a successor's. */
function newOwner(clock: Clock): Owner {
  const owner: Owner = {
    pid: process.pid,
    host: hostname(),
    createdAt: clock.now(),
    token: randomBytes(16).toString('hex'),
  };
  const start = processStart(process.pid);
  return start === undefined ? owner : { ...owner, start };
}

/** Keeps the file's mtime fresh until released, so a slow but healthy refresh is never taken over as stale. */
function hold(
  lockPath: string,
  fh: FileHandle,
  owner: Owner,
  staleMs: number,
  timeoutMs: number,
  clock: Clock,
): () => Promise<void> {
  // The mtime is set from the clock that waiters judge ages by, so a test's clock moved on sees a fresh lock too.
  const beat = clock.setTimeout(
    function touch() {
      const now = new Date(clock.now());
      fh.utimes(now, now).catch(() => {});
      beat.refresh();
    },
    Math.max(10, Math.floor(staleMs / 3)),
  );
  return async () => {
    beat.clear();
    await fh.close().catch(() => {});
    // Never throws: a lock left behind by a failed release turns stale (dead pid, no heartbeat) and is recovered.
    const mine = (snap: Snapshot) => snap.owner?.token === owner.token;
    await removeUnder(lockPath, mine, clock.now() + timeoutMs, clock).catch(() => false);
  };
}

/** Which holder a waiter sees: a change means the lock changed hands (or was let go) since the last look. */
function holderId(holder: Snapshot | null): string | null {
  if (holder === null) return null;
  return holder.owner ? `owner:${holder.owner.token}` : `text:${holder.text}`;
}

/** Backs off to MAX_POLL_MS, jittered so waiters that woke together do not keep colliding. */
function pollDelay(round: number): number {
  const base = Math.min(MAX_POLL_MS, MIN_POLL_MS * 2 ** Math.min(round, 8));
  return Math.floor(base / 2 + Math.random() * base);
}

/** The owner goes to a temp hard-linked to the lock: link(2) lets one racer win, and no one sees it half written. */
async function createExclusive(path: string, content: object): Promise<FileHandle | null> {
  const tmp = await privateTempName(path);
  try {
    await createPrivateFile(tmp, JSON.stringify(content));
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw lockFsError('write', path, err);
  }
  // Opened before it is linked: the lock's name may be gone again by the time this run looks (deleted by hand).
  let fh: FileHandle;
  try {
    fh = await open(tmp, 'r');
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw lockFsError('open', path, err);
  }
  try {
    await link(tmp, path);
    return fh;
  } catch (err) {
    await fh.close().catch(() => {});
    if (errCode(err) === 'EEXIST') return null;
    throw lockFsError('create', path, err);
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

/** Content and mtime of one inode; null when there is no lock; anything but a regular file can never turn stale. */
async function snapshot(path: string): Promise<Snapshot | null> {
  const fh = await open(path, constants.O_RDONLY | O_NONBLOCK | O_NOFOLLOW).catch((err: unknown) => {
    if (errCode(err) === 'ELOOP') throw notALock(path);
    return null;
  });
  if (fh === null) return null;
  try {
    const st = await fh.stat();
    if (st.isFile()) {
      const text = await fh.readFile('utf8');
      return { text, mtimeMs: st.mtimeMs, owner: parseOwner(text) };
    }
  } catch {
    // Gone or unreadable mid-way: as if there were no lock; the exclusive create decides.
    return null;
  } finally {
    await fh.close().catch(() => {});
  }
  throw notALock(path);
}

/** Something local is in the way, which the user removes: a configuration fault (exit 2), not a sign-in problem. */
function notALock(path: string): IdcliError {
  const message = `${path} is not a regular file, so it cannot serve as a lock`;
  return usageError('PATH_NOT_REGULAR', message, 'remove it (no idcli process creates it this way) and try again');
}

function parseOwner(text: string): Owner | null {
  try {
    const o: unknown = JSON.parse(text);
    if (!isJsonObject(o)) return null;
    const { pid, host, createdAt, token, start } = o;
    if (
      typeof pid === 'number' &&
      typeof host === 'string' &&
      typeof createdAt === 'number' &&
      typeof token === 'string'
    )
      return typeof start === 'string' ? { pid, host, createdAt, token, start } : { pid, host, createdAt, token };
  } catch {
    // Not an owner record (written by something else, or damaged): only age can make it stale.
  }
  return null;
}

/** A lock of this host's is stale exactly when its process is gone; only one that cannot be checked ages out. */
function isStale(snap: Snapshot, staleMs: number, clock: Clock): boolean {
  const owner = snap.owner;
  if (owner && owner.host === hostname()) {
    if (!processRunning(owner.pid)) return true;
    if (owner.start !== undefined && processStart(owner.pid) !== undefined)
      return !recordedProcessRunning(owner.pid, owner.start);
  }
  return clock.now() - snap.mtimeMs > staleMs;
}

/**
 * Removes the temp files (`<lock>.<pid>.<hex>.tmp`, and the reaper's) of runs killed between writing one and linking
 * it. Only once a few seconds old: the pid is this host's, and a run on another host sharing the directory (a home
 * on NFS) keeps its temp for two system calls only.
 */
async function sweepDeadTemps(lockPath: string, clock: Clock): Promise<void> {
  const dir = dirname(lockPath);
  const base = basename(lockPath);
  const names = await readdir(dir).catch((): string[] => []);
  for (const name of names) {
    const m = /^\.(?:reaper\.)?(\d+)\.[0-9a-f]+\.tmp$/.exec(name.slice(base.length));
    if (!name.startsWith(base) || !m || processRunning(Number(m[1]))) continue;
    const path = join(dir, name);
    const st = await lstat(path).catch(() => null);
    if (st?.isFile() && clock.now() - st.mtimeMs > REAPER_STALE_MS) await unlink(path).catch(() => {});
  }
}

/** Unlinks the lock if `shouldRemove` still holds, under the reaper; false when it could not be had by `deadline`. */
async function removeUnder(
  lockPath: string,
  shouldRemove: (snap: Snapshot) => boolean,
  deadline: number,
  clock: Clock,
  signal?: AbortSignal,
): Promise<boolean> {
  const reaperPath = `${lockPath}.reaper`;
  const me = newOwner(clock);
  for (;;) {
    const fh = await createExclusive(reaperPath, me);
    if (fh) {
      try {
        const current = await snapshot(lockPath);
        if (current && shouldRemove(current)) await unlink(lockPath).catch(() => {});
      } finally {
        await fh.close().catch(() => {});
        await unlink(reaperPath).catch(() => {});
      }
      return true;
    }
    const reaper = await snapshot(reaperPath);
    // A dead reaper is removed unguarded: a race needs a death inside two syscalls AND two waiters judging it at once.
    if (reaper && isStale(reaper, REAPER_STALE_MS, clock)) {
      await unlink(reaperPath).catch(() => {});
      continue;
    }
    if (clock.now() >= deadline) return false;
    if (signal?.aborted) throw interrupted();
    await sleep(clock, 10 + Math.floor(Math.random() * 41));
  }
}

function holderName(holder: Snapshot | null): string {
  return holder?.owner ? `pid ${holder.owner.pid} on ${holder.owner.host}` : '';
}

/**
 * Something on this machine keeps the lock, which the user lets finish, resumes or removes: exit 2, as for anything
 * local in the way, not 1, which would call it a bug.
 */
function timeoutError(lockPath: string, timeoutMs: number, holder: Snapshot | null, guards: string): IdcliError {
  const owner = holder?.owner;
  const who = owner ? `another idcli (${holderName(holder)})` : 'another process';
  const message = `timed out after ${seconds(timeoutMs)} s waiting for ${who} to finish with ${guards}: it holds the lock ${lockPath}`;
  const hint =
    owner && owner.host === hostname()
      ? `let it finish and run the command again; if it is stopped (Ctrl-Z), resume it (kill -CONT ${owner.pid}) or end it`
      : 'run the command again once it is done; if no idcli is running, delete the lock file';
  return new IdcliError('LOCK_TIMED_OUT', message, ExitCode.USAGE, { hint });
}

/** A failed operation on a lock file or the locks directory, mended in that directory (see fs-faults.ts). */
function lockFsError(doing: FsFaultAt['doing'], path: string, err: unknown, dir = dirname(path)): IdcliError {
  return fsFault(err, { doing, path, dir, orElse: CONFIG_DIR_ELSEWHERE });
}

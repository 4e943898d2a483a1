/**
 * `list -o FILE`'s one writer claims it with the directory `FILE.idcli-run`, holding one file named by a random tag
 * that records the run (pid, host, start); a claim whose run is gone is taken over (docs/cli.md, "One writer").
 *
 * A directory, not a file: a stale holder is removed by its own name, which no later claim ever has, so of runs that
 * take the same stale claim over none can remove a claim made since; and rename(2) puts a new claim only where there
 * is none or an empty one, so one of them wins. No second file guards the takeover, so none can be left to block it.
 */
import {
  closeSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmdirSync,
  type Stats,
  unlinkSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { type IdcliError, usageError } from '../errors.js';
import { fsFault } from '../fs-faults.js';
import { errCode, isJsonObject } from '../shape.js';
import { createPrivateFileSync, removeQuietly } from '../private-file.js';
import { openNoFollow, readBounded, refuseForeignOwner, refuseOpenedFile, TooLarge } from '../private-path.js';
import { processStart, recordedProcessRunning } from '../store/pid.js';

export const CLAIM_SUFFIX = '.idcli-run';
/** The claim is made under this name first (`x` stands for a random character): the longest name beside FILE. */
export const CLAIM_TEMP_SUFFIX = `${CLAIM_SUFFIX}.xxxxxxx.tmp`;
/** A holder is a line of JSON; anything larger is not one idcli wrote. */
const HOLDER_MAX_BYTES = 4096;
/** Rounds of finding a stale claim gone or changed before the run gives up, saying another run is claiming FILE. */
const ROUNDS = 20;

interface Holder {
  pid: number;
  host: string;
  /** When the process started (processStart): tells the run from a later process given the same pid. */
  start: string | undefined;
}

/** What a look at the claim found: a live run, or what was cleared (the next round tries again). */
type Seen = { live: Holder } | { cleared: true };

/** Claims `file` (resolved; `shown` as the user named it) and returns the release; exit 2 when a live run holds it. */
export function claimDump(file: string, shown: string): () => void {
  const path = `${file}${CLAIM_SUFFIX}`;
  const hint = `remove ${path} (rm -r) if no idcli run writes ${shown}, or name another file for -o`;
  const tag = randomText(8);
  const me: Holder = { pid: process.pid, host: hostname(), start: processStart(process.pid) };
  const tmp = makeTempClaim(file, tag, me);
  try {
    for (let round = 0; round < ROUNDS; round++) {
      if (install(tmp, path)) return releaser(path, tag);
      const seen = look(path, hint);
      if ('live' in seen) {
        const { pid, host } = seen.live;
        const where = host === me.host ? '' : ` on ${host}`;
        throw usageError(
          'OUTPUT_CLAIMED',
          `${shown} is being written by another idcli run (pid ${pid}${where})`,
          `wait for it to end, or stop it; if no run is left, remove ${path} (rm -r)`,
        );
      }
    }
    throw usageError(
      'OUTPUT_CLAIMED',
      `${shown} is being claimed by another idcli run`,
      'wait for it to end, or stop it',
    );
  } finally {
    // Gone once installed; what a failed claim leaves is removed.
    removeQuietly(`${tmp}/${tag}`);
    try {
      rmdirSync(tmp);
    } catch {
      // Installed (renamed away), or never made.
    }
  }
}

/** A fresh private directory under a name no one can guess, holding the holder: a planted name is never used. */
function makeTempClaim(file: string, tag: string, me: Holder): string {
  for (let attempt = 0; ; attempt++) {
    const tmp = `${file}${CLAIM_TEMP_SUFFIX.replace('xxxxxxx', randomText(5))}`;
    try {
      mkdirSync(tmp, { mode: 0o700 });
    } catch (err) {
      if (errCode(err) === 'EEXIST' && attempt < 8) continue;
      throw err;
    }
    createPrivateFileSync(`${tmp}/${tag}`, `${JSON.stringify(me)}\n`);
    return tmp;
  }
}

/** rename(2) replaces only an empty directory: false when a claim (or anything else) is in the way. */
function install(tmp: string, path: string): boolean {
  try {
    renameSync(tmp, path);
    return true;
  } catch (err) {
    const code = errCode(err);
    if (code === 'EEXIST' || code === 'ENOTEMPTY' || code === 'ENOTDIR' || code === 'EISDIR') return false;
    if (code === 'EPERM' || code === 'EACCES') return false; // another user's entry in a sticky directory: look says so
    throw err;
  }
}

function releaser(path: string, tag: string): () => void {
  let held = true;
  return () => {
    // Once only, and by the holder's own name: what is removed is this run's claim, never one made since.
    if (!held) return;
    held = false;
    removeQuietly(`${path}/${tag}`);
    try {
      rmdirSync(path);
    } catch {
      // Another run's claim already (it replaced the empty directory), or gone: either way not this run's.
    }
  };
}

/** What is at the claim: a live run's, or whatever stale thing was found is removed; exit 2 for what is not idcli's. */
function look(path: string, hint: string): Seen {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (err) {
    if (errCode(err) === 'ENOENT') return { cleared: true };
    throw claimFault(err, path);
  }
  if (st.isSymbolicLink()) throw foreign(path, `a symbolic link of uid ${st.uid}`, hint);
  refuseForeignOwner(path, st, hint);
  // No idcli run makes a file here: a plain file is a stale claim, whatever it holds, and no run's claim can be
  // removed with it (unlink(2) does not remove a directory).
  if (st.isFile()) return clear(path);
  if (!st.isDirectory()) throw foreign(path, 'neither a file nor a directory', hint);
  let names: string[];
  try {
    names = readdirSync(path);
  } catch (err) {
    if (errCode(err) === 'ENOENT' || errCode(err) === 'ENOTDIR') return { cleared: true };
    throw claimFault(err, path);
  }
  const [name] = names;
  // Empty: a run between taking over and claiming, or one killed there; the next rename replaces it.
  if (name === undefined) return { cleared: true };
  if (names.length > 1) throw foreign(path, `a directory of ${names.length} entries`, hint);
  const holderPath = `${path}/${name}`;
  const holder = readHolder(holderPath, hint);
  if (holder === null) return { cleared: true }; // gone since
  if (holder !== undefined && (holder.host !== hostname() || recordedProcessRunning(holder.pid, holder.start)))
    return { live: holder };
  // Its run is gone (killed outright, it could not let go), or it is not a holder idcli wrote.
  return clear(holderPath);
}

/** Removes a stale `path` by its name: a claim made since has another. */
function clear(path: string): Seen {
  try {
    unlinkSync(path);
  } catch (err) {
    const code = errCode(err);
    // Gone since, or replaced since by a run's claim (a directory), which is the next round's to see.
    if (code !== 'ENOENT' && code !== 'EISDIR' && code !== 'EPERM') throw claimFault(err, path);
  }
  return { cleared: true };
}

/** Null when gone; undefined for one that is not a holder (empty, garbage, too large); exit 2 for a foreign one. */
function readHolder(path: string, hint: string): Holder | undefined | null {
  let fd: number;
  try {
    fd = openNoFollow(path);
  } catch (err) {
    if (errCode(err) === 'ENOENT') return null;
    if (errCode(err) === 'ELOOP') throw foreign(path, 'a symbolic link', hint);
    throw claimFault(err, path);
  }
  try {
    if (!fstatSync(fd).isFile()) throw foreign(path, 'not a regular file', hint);
    refuseOpenedFile(fd, path, hint);
    return holderIn(readBounded(fd, HOLDER_MAX_BYTES));
  } catch (err) {
    if (err instanceof TooLarge) return undefined;
    throw err;
  } finally {
    closeSync(fd);
  }
}

function holderIn(text: string): Holder | undefined {
  try {
    const o: unknown = JSON.parse(text);
    if (!isJsonObject(o) || typeof o.pid !== 'number' || typeof o.host !== 'string') return undefined;
    const start = typeof o.start === 'string' ? o.start : undefined;
    // Only a positive integer names a process; any other number is a record no run of idcli wrote.
    return Number.isSafeInteger(o.pid) && o.pid > 0 ? { pid: o.pid, host: o.host, start } : undefined;
  } catch {
    return undefined; // not a holder of idcli's
  }
}

function foreign(path: string, what: string, hint: string): IdcliError {
  return usageError('OUTPUT_CLAIM_FOREIGN', `refusing to use ${path}: it is ${what}, not a claim of idcli`, hint);
}

/** A failure on the claim names the claim, not FILE: it is the claim the user looks at. */
function claimFault(err: unknown, path: string): IdcliError {
  return fsFault(err, { doing: 'read', path, dir: path });
}

/** node:crypto loads here only, so a list to stdout does not pay for it at start-up. */
const randomText = (bytes: number): string =>
  process.getBuiltinModule('node:crypto').randomBytes(bytes).toString('base64url');

/**
 * The state file of `idcli list -o FILE` (docs/cli.md, "list -o"): `FILE.idcli-state`, one JSON object saying which
 * walk FILE belongs to, where it continues, and how much of FILE is whole pages. It is replaced atomically (a temp
 * file, then rename), so a reader sees the previous state or the next one, never a torn one.
 */
import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, openSync, writeSync } from 'node:fs';
import { ExitCode, IdcliError } from '../errors.js';
import { errCode, isJsonObject } from '../shape.js';
import { createPrivateFileSync, removeQuietly, replacePrivateFileSync } from '../private-file.js';
import { O_NOFOLLOW, openNoFollow, ownedByMe, readBounded, TooLarge } from '../private-path.js';

/** What makes two runs the same walk: a state is continued only by a run whose identity is equal in every field. */
export interface WalkIdentity {
  /** The target as given on the command line. */
  target: string;
  apiBaseUrl: string;
  profile: string;
  /** Shaping flags as the user gave them (null when not given): they decide which items land on which page. */
  pageSize: number | string | null;
  pageIndex: number | null;
}

export interface DumpState {
  walk: WalkIdentity;
  /** The URL that fetches exactly the items after the last whole page in FILE. */
  next: string;
  /** Items in FILE's first `bytes` bytes. */
  items: number;
  /** FILE's length at the end of the last whole page. */
  bytes: number;
  /** FILE's last bytes before `bytes` (hex, at most TAIL_BYTES), so a FILE replaced since is not continued. */
  tail: string;
}

/** How FILE must end for its state to be continued: enough to tell another file, cheap to read back. */
export const TAIL_BYTES = 32;

const FORMAT = 'idcli list -o state';
const VERSION = 1;
/**
 * Far above any real state (a resume URL is at most a few kB, a server's link seldom more than a few MB), far below
 * what could exhaust memory.
 */
export const MAX_STATE_BYTES = 16 * 1024 * 1024;
export const STATE_SUFFIX = '.idcli-state';

export function statePath(file: string): string {
  return `${file}${STATE_SUFFIX}`;
}

function tempOf(state: string): string {
  return `${state}.tmp`;
}

/** Why a state file cannot be used, for the exit-2 message. */
export class StateUnreadable extends Error {}

/**
 * The state beside FILE; undefined when there is none. Throws StateUnreadable for a file that is not a state this
 * version wrote (a symlink, another user's file, bad JSON, missing fields), and the file system's error for one that
 * cannot be opened or read.
 */
export function readState(path: string): DumpState | undefined {
  let text: string;
  let fd: number;
  try {
    // Not followed, and a FIFO planted as the state is refused by the fstat below, not waited on.
    fd = openNoFollow(path);
  } catch (err) {
    const code = errCode(err);
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new StateUnreadable('it is a symbolic link');
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new StateUnreadable('it is not a regular file');
    // Another user's state could steer the walk, and this user's token, anywhere on the API.
    if (!ownedByMe(st)) throw new StateUnreadable(`it belongs to another user (uid ${st.uid})`);
    text = readBounded(fd, MAX_STATE_BYTES);
  } catch (err) {
    if (err instanceof TooLarge) throw new StateUnreadable(err.message);
    throw err;
  } finally {
    closeSync(fd);
  }
  return parseState(text);
}

/** A state's text, checked field by field: anything else is refused rather than guessed at. */
export function parseState(text: string): DumpState {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new StateUnreadable('it is not valid JSON');
  }
  if (!isJsonObject(raw) || raw.format !== FORMAT) throw new StateUnreadable('it is not an idcli state');
  if (raw.version !== VERSION) throw new StateUnreadable(`its version ${String(raw.version)} is not ${VERSION}`);
  const { walk, next, items, bytes, tail } = raw;
  const wrong = new StateUnreadable('a field is missing or has the wrong type');
  if (!isJsonObject(walk)) throw wrong;
  const { target, apiBaseUrl, profile, pageSize, pageIndex } = walk;
  const count = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  if (
    typeof target !== 'string' ||
    typeof apiBaseUrl !== 'string' ||
    typeof profile !== 'string' ||
    !(pageSize === null || count(pageSize) || typeof pageSize === 'string') ||
    !(pageIndex === null || count(pageIndex)) ||
    typeof next !== 'string' ||
    !count(items) ||
    !count(bytes) ||
    typeof tail !== 'string' ||
    !/^(?:[0-9a-f]{2})*$/.test(tail) ||
    tail.length > 2 * TAIL_BYTES
  )
    throw wrong;
  return { walk: { target, apiBaseUrl, profile, pageSize, pageIndex }, next, items, bytes, tail };
}

/**
 * Replaces the state through `<state>.tmp` (see replacePrivateFileSync). Synchronous, so the walk goes on only once
 * the state is current.
 */
export function writeState(path: string, state: DumpState): void {
  replacePrivateFileSync(path, stateText(state), tempOf(path));
}

function stateText(state: DumpState): string {
  return `${JSON.stringify({ format: FORMAT, version: VERSION, ...state })}\n`;
}

/**
 * Writes the state over the one on disk, in place: for a full disk, where the temp file of writeState finds no
 * room but the blocks of the state already there still take a state of about its size. Not atomic: a run killed
 * in the middle of it leaves a state the next run refuses (exit 2, naming --restart), never a wrong one.
 */
export function overwriteState(path: string, state: DumpState): void {
  const fd = openSync(path, constants.O_WRONLY | O_NOFOLLOW);
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || !ownedByMe(st)) throw new StateUnreadable('it is not a state of this user');
    const text = Buffer.from(stateText(state));
    let done = 0;
    while (done < text.length) done += writeSync(fd, text, done, text.length - done, done);
    ftruncateSync(fd, text.length);
  } finally {
    closeSync(fd);
  }
}

/** Removes the state of a walk that is complete; a missing one is no error. */
export function dropState(path: string): void {
  removeQuietly(path);
}

/**
 * Removes the state and a temp a killed run may have left; a missing one is no error. What cannot be removed
 * (another user's file in a sticky directory, a directory) is refused (exit 2) naming it, before FILE is touched.
 */
export function removeState(path: string, hint: string): void {
  for (const p of [path, tempOf(path)]) {
    removeQuietly(p);
    inTheWay(p, hint);
  }
}

/**
 * Creates and removes the state's temp file: a state that cannot be written (a directory that may not be written,
 * a name too long, a file planted where the temp goes) is told before FILE is touched. Throws the file system's
 * error for the caller's fault mapper, or exit 2 for a file in the way that cannot be removed.
 */
export function probeState(path: string, hint: string): void {
  const tmp = tempOf(path);
  removeQuietly(tmp);
  inTheWay(tmp, hint);
  createPrivateFileSync(tmp, '');
  removeQuietly(tmp);
}

function inTheWay(path: string, hint: string): void {
  let st;
  try {
    st = lstatSync(path);
  } catch (err) {
    if (errCode(err) === 'ENOENT') return;
    throw err;
  }
  const what = st.isDirectory() ? 'a directory' : st.isSymbolicLink() ? 'a symbolic link' : 'a file';
  const whose = ownedByMe(st) ? '' : ` of another user (uid ${st.uid})`;
  throw new IdcliError(
    'PATH_IN_THE_WAY',
    `${path} is in the way: it is ${what}${whose} that idcli cannot remove`,
    ExitCode.USAGE,
    {
      hint: `remove it, or ${hint}`,
    },
  );
}

/** Which setting of `got` differs from `want`, named as the user sets it, with both values; undefined when equal. */
export function identityDiff(want: WalkIdentity, got: WalkIdentity): string | undefined {
  const names: Array<[keyof WalkIdentity, string]> = [
    ['target', 'the target'],
    ['apiBaseUrl', 'api-base-url'],
    ['profile', 'the profile'],
    ['pageSize', '--page-size'],
    ['pageIndex', '--page-index'],
  ];
  for (const [key, name] of names) {
    if (want[key] === got[key]) continue;
    const shown = (v: unknown): string => (v === null ? 'not given' : JSON.stringify(v));
    return `${name} differs (${shown(want[key])} there, ${shown(got[key])} here)`;
  }
  return undefined;
}

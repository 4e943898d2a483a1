// `FILE.idcli-state` of `idcli list -o FILE` (docs/cli.md, "list -o"): replaced atomically (a temp file, then
// rename), so a reader sees the previous state or the next one, never a torn one.
import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, openSync, writeSync } from 'node:fs';
import { usageError } from '../errors.js';
import { errCode, isJsonObject } from '../shape.js';
import { createPrivateFileSync, removeQuietly, replacePrivateFileSync } from '../private-file.js';
import { O_NOFOLLOW, openNoFollow, ownedByMe, readBounded, TooLarge } from '../private-path.js';

/** A state is continued only by a run whose identity is equal in every field. */
export interface WalkIdentity {
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
/** Far above any real state (a server's link is seldom more than a few MB), far below exhausting memory. */
const MAX_STATE_BYTES = 16 * 1024 * 1024;
const STATE_SUFFIX = '.idcli-state';

export const statePath = (file: string): string => `${file}${STATE_SUFFIX}`;
const tempOf = (state: string): string => `${state}.tmp`;

/** Why a state file cannot be used, for the exit-2 message. */
export class StateUnreadable extends Error {}

/** Undefined when there is none; StateUnreadable for a file that is not a state this version wrote. */
export function readState(path: string): DumpState | undefined {
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
    return parseState(readBounded(fd, MAX_STATE_BYTES));
  } catch (err) {
    if (err instanceof TooLarge) throw new StateUnreadable(err.message);
    throw err;
  } finally {
    closeSync(fd);
  }
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

/** Synchronous, so the walk goes on only once the state is current. */
export function writeState(path: string, state: DumpState): void {
  replacePrivateFileSync(path, stateText(state), tempOf(path));
}

const stateText = (state: DumpState): string => `${JSON.stringify({ format: FORMAT, version: VERSION, ...state })}\n`;

/** In place, for a full disk: not atomic, but a torn state is refused (exit 2, --restart), never taken as right. */
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

/** Also a temp a killed run may have left; what cannot be removed is refused (exit 2) before FILE is touched. */
export function removeState(path: string, hint: string): void {
  for (const p of [path, tempOf(path)]) {
    removeQuietly(p);
    inTheWay(p, hint);
  }
}

/** Creates and removes the temp, so a state that cannot be written is told before FILE is touched. */
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
  const message = `${path} is in the way: it is ${what}${whose} that idcli cannot remove`;
  throw usageError('PATH_IN_THE_WAY', message, `remove it, or ${hint}`);
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

/**
 * The one owner-and-mode rule for every private path (docs/cli.md, "Private files"), as ssh's StrictModes: the path,
 * every directory above it up to `/` and every link on the way are the user's or root's, and no one else may write
 * them. A link in a directory others may write is followed only if the user made it (protected_symlinks, kept by
 * idcli where the kernel does not). A path idcli names itself is never a link; one the user names may be a link of
 * theirs. A FIFO or device is refused unopened.
 */
import { chmodSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync, type Stats } from 'node:fs';
import { basename, dirname, isAbsolute, join, sep } from 'node:path';
import { type ErrorCode, ExitCode, IdcliError } from './errors.js';
import { errCode } from './shape.js';
import { shellQuote } from './shell-quote.js';

const POSIX = process.platform !== 'win32';
/** open(2) fails with ELOOP on a link in the last component, so a link planted after a check is not followed. */
export const O_NOFOLLOW = POSIX ? constants.O_NOFOLLOW : 0;
/** A FIFO put in a file's place after a check must not block the open (it is refused by the fstat after it). */
export const O_NONBLOCK = POSIX ? constants.O_NONBLOCK : 0;
const STICKY = 0o1000;
const OTHERS_WRITE = 0o022;
/** Links followed on the way to one path, as Linux allows (MAXSYMLINKS). */
const MAX_LINKS = 40;

export const PRIVATE_DIR_MODE = 0o700;

/** Whether this process owns `st`: always on Windows, which has no uids. */
export function ownedByMe(st: Stats): boolean {
  const uid = process.getuid?.();
  return uid === undefined || st.uid === uid;
}

/** The user or root: no one else can change what such an owner leaves. */
function trustedOwner(st: Stats): boolean {
  return ownedByMe(st) || st.uid === 0;
}

/** A directory whose entries only the user (and root) can replace: theirs, and closed to others' writes or sticky. */
function safeDir(st: Stats): boolean {
  return !POSIX || (trustedOwner(st) && ((st.mode & OTHERS_WRITE) === 0 || (st.mode & STICKY) !== 0));
}

/** How a directory's mode lets others in, for a message: "0777". */
function modeText(st: Stats): string {
  return `0${(st.mode & 0o7777).toString(8)}`;
}

/** "remove it, or <hint>", unless the hint already starts by removing it (config.json's does). */
function orRemove(what: string, hint: string): string {
  return hint.startsWith('remove ') ? hint : `remove ${what}, or ${hint}`;
}

function refused(code: ErrorCode, message: string, hint: string): IdcliError {
  return new IdcliError(code, message, ExitCode.USAGE, { hint });
}

/** Exit 2 when `st` belongs to another user than this process's, like ssh refuses a key file it does not own. */
export function refuseForeignOwner(
  path: string,
  st: Stats,
  hint = 'use a config directory of your own (IDCLI_CONFIG_DIR), or have its owner hand it over (chown)',
): void {
  const uid = process.getuid?.();
  if (uid === undefined || st.uid === uid) return;
  throw refused(
    'PATH_FOREIGN_OWNER',
    `refusing to use ${path}: it belongs to another user (uid ${st.uid}), not to you (uid ${uid})`,
    hint,
  );
}

/** Exit 2 unless `dir` (the directory `path` is in) lets no one else replace `path`. */
function refuseUnsafeDir(path: string, dir: string, st: Stats, hint: string): void {
  if (safeDir(st)) return;
  const who = trustedOwner(st) ? `other users may write it (mode ${modeText(st)})` : `it belongs to uid ${st.uid}`;
  throw refused('PATH_UNSAFE_DIRECTORY', `refusing to use ${path}: it is in ${dir}, and ${who}`, hint);
}

/** Exit 2 unless `dir`, a directory above `path`'s own, lets no one else replace what is in it (ssh's StrictModes). */
function refuseUnsafeAncestor(path: string, dir: string, st: Stats, hint: string): void {
  if (safeDir(st)) return;
  const who = trustedOwner(st) ? `other users may write it (mode ${modeText(st)})` : `it belongs to uid ${st.uid}`;
  throw refused('PATH_UNSAFE_DIRECTORY', `refusing to use ${path}: ${dir} is on the way to it, and ${who}`, hint);
}

/** A link another user made, or one in a directory others may replace it in (protected_symlinks, as kept by idcli). */
function unsafeLink(link: string, st: Stats, dir: string, dirSt: Stats, hint: string): IdcliError {
  const why = !trustedOwner(st)
    ? `it belongs to another user (uid ${st.uid})`
    : `it is in ${dir}, which ${trustedOwner(dirSt) ? `other users may write (mode ${modeText(dirSt)})` : `belongs to uid ${dirSt.uid}`}`;
  return refused(
    'PATH_UNSAFE_LINK',
    `refusing to follow the symbolic link ${link}: ${why}`,
    orRemove('the link', hint),
  );
}

/**
 * The path a path the user named stands for, each link on the way followed only as the rule allows (exit 2
 * otherwise); free of links up to the first component that does not exist. Every directory a name is looked up in,
 * from `/` down and along every link's target, is the user's or root's and closed to others' writes unless sticky:
 * then no other user can rename anything on the way, and the path returned opens what was checked. With `followLast`
 * false a link in the last component is returned as it is, for the caller to refuse.
 */
export function resolveTrusted(path: string, hint: string, followLast = true): string {
  if (!POSIX) return path;
  // Not path.resolve: it takes `..` before the links, where the kernel takes it after them.
  let rest = (isAbsolute(path) ? path : `${process.cwd()}${sep}${path}`).split(sep).filter(Boolean);
  let at: string = sep;
  let atSt = lstatSync(sep);
  let links = 0;
  for (let name = rest.shift(); name !== undefined; name = rest.shift()) {
    if (name === '.') continue;
    if (name === '..') {
      // `..` is looked up in `at` too: whoever may replace `at` decides where it leads.
      refuseUnsafeAncestor(path, at, atSt, hint);
      at = dirname(at);
      atSt = lstatSync(at);
      continue;
    }
    const last = !rest.some((n) => n !== '.');
    const next = join(at, name);
    let st: Stats | undefined;
    try {
      st = lstatSync(next);
    } catch {
      // Not there yet (or not reachable): the caller's own open or stat tells what is wrong.
    }
    const follow = st?.isSymbolicLink() === true && (followLast || !last);
    if (follow && (!trustedOwner(st!) || !safeDir(atSt))) throw unsafeLink(next, st!, at, atSt, hint);
    if (last) refuseUnsafeDir(path, at, atSt, hint);
    else refuseUnsafeAncestor(path, at, atSt, hint);
    // A file where a directory should be: the caller's open tells ENOTDIR.
    if (st === undefined || (!last && !st.isDirectory() && !st.isSymbolicLink())) return join(next, ...rest);
    if (!follow) {
      at = next;
      atSt = st;
      continue;
    }
    if (++links > MAX_LINKS)
      throw refused('PATH_TOO_MANY_LINKS', `refusing to use ${path}: too many symbolic links on the way`, hint);
    const target = readlinkSync(next);
    rest = [...target.split(sep).filter(Boolean), ...rest];
    if (isAbsolute(target)) {
      at = sep;
      atSt = lstatSync(sep);
    }
  }
  return at;
}

/**
 * What is at the resolved `path`, checked before it is opened: undefined when nothing is there yet in a safe
 * directory; exit 2 (with `hint`) for a file not regular or another user's, or a directory others may write.
 */
export function inspectPrivateFile(path: string, hint: string): Stats | undefined {
  let st: Stats | undefined;
  try {
    st = lstatSync(path);
  } catch (err) {
    if (errCode(err) !== 'ENOENT') throw err;
  }
  if (st?.isSymbolicLink())
    throw refused('SYMLINK_REFUSED', `refusing to follow the symbolic link ${path}`, orRemove('the link', hint));
  if (st !== undefined && !st.isFile()) {
    const what = st.isDirectory() ? 'a directory' : st.isFIFO() ? 'a FIFO' : 'not a regular file';
    throw refused('PATH_NOT_REGULAR', `refusing to use ${path}: it is ${what}`, hint);
  }
  if (st !== undefined) refuseForeignOwner(path, st, orRemove('it', hint));
  // Every directory up to `/`; a missing one is told by the open that needs it.
  resolveTrusted(path, hint, false);
  return st;
}

/** Exit 2 unless `fd`, opened at `path`, is a regular file of this user's (or root's, read only): the recheck. */
export function refuseOpenedFile(fd: number, path: string, hint: string, readOnly = false): Stats {
  const st = fstatSync(fd);
  if (!st.isFile()) throw refused('PATH_NOT_REGULAR', `${path} is not a regular file`, hint);
  if (!(readOnly && st.uid === 0)) refuseForeignOwner(path, st, orRemove('it', hint));
  return st;
}

export interface DirCheck {
  /** Told when the directory was open to other users and got tightened (or could not be). */
  warn: (msg: string) => void;
  /** What to do instead, when the directory is refused. */
  hint: string;
  /** Whether a link of the user's own may stand for the directory (one the user named); else a link is refused. */
  follow: boolean;
  /** What to do about a refused link: the default fits the credentials directory, which `login` makes again. */
  linkHint?: string;
}

/**
 * A directory of private files: false when not there; exit 2 when another user's, a refused link or in an unsafe
 * directory (ENOTDIR thrown for the fault mapper). Open to others it is tightened to 0700, or refused if writable.
 */
export function checkPrivateDir(dir: string, opts: DirCheck): boolean {
  const path = resolveTrusted(dir, opts.hint, opts.follow);
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (err) {
    if (errCode(err) === 'ENOENT') return false;
    throw err;
  }
  if (st.isSymbolicLink())
    throw refused(
      'SYMLINK_REFUSED',
      `refusing to follow the symbolic link ${dir}`,
      opts.linkHint ?? 'remove the link and run `idcli login`',
    );
  if (!st.isDirectory()) throw Object.assign(new Error(`${dir} is not a directory`), { code: 'ENOTDIR' });
  refuseForeignOwner(dir, st, opts.hint);
  if (!POSIX || (st.mode & 0o077) === 0) return true;
  // A sticky directory open to all (/tmp, as root's own) is shared by design: taking it from the others would break
  // their programs, so it is refused, never tightened.
  if ((st.mode & STICKY) !== 0 && (st.mode & OTHERS_WRITE) !== 0)
    throw refused(
      'PATH_UNSAFE_DIRECTORY',
      `refusing to use ${dir}: it is a directory shared by all users (mode ${modeText(st)})`,
      opts.hint,
    );
  const told = tightenMode(dir, st, PRIVATE_DIR_MODE, 'accessible', () => chmodSync(path, PRIVATE_DIR_MODE));
  if (told.failed && (st.mode & OTHERS_WRITE) !== 0)
    throw refused(
      'PATH_UNSAFE_DIRECTORY',
      `refusing to use ${dir}: other users may write it (mode ${modeText(st)})`,
      told.fix,
    );
  opts.warn(told.message);
  return true;
}

/**
 * Runs `chmod` to take the group and other bits off, and tells what happened: `what` is how the path was open
 * ("accessible", "readable"), `mode` the one it gets. A chmod that failed is told as failed, with its fix.
 */
export function tightenMode(
  path: string,
  st: Stats,
  mode: number,
  what: string,
  chmod: () => void,
): { message: string; failed: boolean; fix: string } {
  const was = `0${(st.mode & 0o777).toString(8)}`;
  const want = `0${mode.toString(8)}`;
  const fix = `run: chmod ${want.slice(1)} ${shellQuote(path)}`;
  try {
    chmod();
  } catch (err) {
    const code = errCode(err) ?? 'failed';
    const message = `${path} is ${what} by other users (mode ${was}) and could not be tightened (${code}); ${fix}`;
    return { message, failed: true, fix };
  }
  return { message: `${path} was ${what} by other users (mode ${was}); tightened to ${want}`, failed: false, fix };
}

/** Thrown by readBounded for a file over its limit; the caller says what to do. */
export class TooLarge extends Error {}

/** The whole of the regular file at `fd`, refused unread over `max` bytes (a file that grew past it too). */
export function readBounded(fd: number, max: number): string {
  return readBoundedBytes(fd, max).toString('utf8');
}

/** readBounded's bytes as they are, for a reader that checks their encoding itself. */
export function readBoundedBytes(fd: number, max: number): Buffer {
  const size = fstatSync(fd).size;
  if (size > max) throw new TooLarge(`it is larger than ${sizeText(max)}`);
  // One byte more than fstat said: a file that grew past the limit since is caught too.
  const buf = Buffer.allocUnsafe(Math.min(size, max) + 1);
  let length = 0;
  for (let n = 1; n > 0 && length < buf.length; length += n) n = readSync(fd, buf, length, buf.length - length, null);
  if (length > max) throw new TooLarge(`it is larger than ${sizeText(max)}`);
  return buf.subarray(0, length);
}

function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024} MB` : `${bytes / 1024} kB`;
}

/** Opens `path` for reading without following a link in its last part, nor waiting on a FIFO. */
export function openNoFollow(path: string): number {
  return openSync(path, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
}

/** The longest name a directory entry may have on the file systems idcli meets (NAME_MAX). */
export const NAME_MAX = 255;

/** Whether `name` with `suffix` still fits in one directory entry. */
export function nameFits(path: string, suffix: string): boolean {
  return Buffer.byteLength(basename(path) + suffix) <= NAME_MAX;
}

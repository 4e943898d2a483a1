/**
 * The one reading of a failed file operation (docs/cli.md, "Exit codes"): a fault the user can mend (permissions, a
 * full disk, something in the way) is exit 2 with the fix; any other (EIO, …) exit 1, `cannot <doing> <path> (<CODE>)`.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { dirname, parse, resolve, sep } from 'node:path';
import { ExitCode, IdcliError } from './errors.js';
import { NAME_MAX } from './private-path.js';
import { errCode, errMessage } from './shape.js';
import { shellQuote } from './shell-quote.js';

export interface FsFaultAt {
  /** What failed: `cannot <doing> <path>`. */
  doing: 'read' | 'write' | 'create' | 'open' | 'delete';
  path: string;
  /** What the user mends: the directory written in (or the nearest above it), or the file itself when refused. */
  dir: string;
  /** A further way out, appended to the fix: "or set IDCLI_CONFIG_DIR to another directory". */
  orElse?: string;
}

type Fix = (mend: string, at: FsFaultAt) => { reason: string; fix: string };

const denied =
  (reason: string): Fix =>
  (mend, at) => {
    const file = !isDirectory(mend);
    const may = at.doing === 'read' ? 'readable' : 'writable';
    return { reason, fix: `make ${mend} ${may} for you (chmod ${file ? 'u+rw' : 'u+rwx'} ${shellQuote(mend)})` };
  };

const inTheWay: Fix = (_mend, at) => {
  const file = fileInTheWay(at.path);
  return file === undefined
    ? { reason: 'a part of it is not a directory', fix: `check ${at.path}` }
    : { reason: `${file} is a file, not a directory`, fix: `remove or rename ${file}` };
};

/** The codes a user can mend, each with its reason in words and its fix. */
const MENDABLE: Record<string, Fix> = {
  EACCES: denied('permission denied'),
  EPERM: denied('operation not permitted'),
  EROFS: (mend) => ({ reason: 'read-only file system', fix: `mount the file system of ${mend} read-write` }),
  ENOSPC: (mend) => ({ reason: 'no space left on the disk', fix: `free some space on the disk of ${mend}` }),
  EDQUOT: () => ({ reason: 'disk quota exceeded', fix: 'free some space within your disk quota' }),
  ENOTDIR: inTheWay,
  // mkdir -p answers EEXIST when a directory's name is taken by a file; a caller for whom EEXIST means something
  // else (an exclusive create) handles it before it comes here.
  EEXIST: inTheWay,
  EISDIR: (_mend, at) => ({ reason: 'it is a directory', fix: `remove or rename the directory ${at.path}` }),
  ELOOP: (_mend, at) => ({ reason: 'it is a symbolic link', fix: `remove the link ${at.path}` }),
  ENAMETOOLONG: (_mend, at) => {
    const longName = at.path.split(sep).some((name) => Buffer.byteLength(name) > NAME_MAX);
    return longName
      ? { reason: `a name in it is longer than ${NAME_MAX} bytes`, fix: 'use a shorter name' }
      : { reason: `it is too long (${Buffer.byteLength(at.path)} bytes)`, fix: 'use a shorter path' };
  },
};

/** Characters of a path kept at each end when the path is too long to show whole in a one-line message. */
const SHOWN_END = 60;

/** `path` as a message shows it: one too long to read keeps its start and its end, which tell where it is. */
export function shownPath(path: string): string {
  if (path.length <= 2 * SHOWN_END + 20) return path;
  return `${path.slice(0, SHOWN_END)}…${path.slice(-SHOWN_END)}`;
}

/** The error for `err`, met while doing `at.doing` to `at.path`: exit 2 with the fix when the user can mend it. */
export function fsFault(err: unknown, at: FsFaultAt): IdcliError {
  const code = errCode(err);
  const mendable = code === undefined ? undefined : MENDABLE[code];
  if (mendable === undefined) {
    const why = code ?? errMessage(err);
    const message = `cannot ${at.doing} ${shownPath(at.path)} (${why})`;
    return new IdcliError('FS_FAILED', message, ExitCode.INTERNAL, { cause: err });
  }
  // Absolute: a relative name has no directory to name in the fix (`-o ro.ndjson`).
  const { reason, fix } = mendable(whereToMend(resolve(at.dir)), at);
  const message = `cannot ${at.doing} ${shownPath(at.path)}: ${reason} (${code})`;
  return new IdcliError('FS_REFUSED', message, ExitCode.USAGE, {
    hint: at.orElse === undefined ? fix : `${fix}, ${at.orElse}`,
    cause: err,
  });
}

/** `dir`, or the directory above it that may not be entered, or the nearest above it that exists. */
function whereToMend(dir: string): string {
  let reached = parse(dir).root;
  for (const part of dir.slice(reached.length).split(sep).filter(Boolean)) {
    const next = reached.endsWith(sep) ? `${reached}${part}` : `${reached}${sep}${part}`;
    if (!exists(next)) return reached;
    if (next !== dir && isDirectory(next) && !canEnter(next)) return next;
    reached = next;
  }
  return dir;
}

/** The nearest existing path at or above `path` that is not a directory: the file that blocks it. */
function fileInTheWay(path: string): string | undefined {
  for (let p = path; ; p = dirname(p)) {
    try {
      if (!statSync(p).isDirectory()) return p;
    } catch {
      // ENOENT or ENOTDIR: the file is further up.
    }
    if (dirname(p) === p) return undefined;
  }
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return true; // not there yet: a directory to be created
  }
}

function canEnter(dir: string): boolean {
  try {
    accessSync(dir, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

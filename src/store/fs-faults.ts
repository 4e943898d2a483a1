/**
 * A directory idcli must write to but cannot, for a reason only the user can mend (permissions, a read-only mount,
 * a full disk): a configuration fault (exit 2) with its fix. Any other failed file operation is an internal error.
 */
import { ExitCode, IdcliError } from '../errors.js';
import { shellQuote } from '../shell-quote.js';

const FIXES: Record<string, (dir: string) => string> = {
  EACCES: (dir) => `make it writable for you (chmod 700 ${shellQuote(dir)})`,
  EPERM: (dir) => `make it writable for you (chmod 700 ${shellQuote(dir)})`,
  EROFS: () => 'it is on a read-only file system: mount that read-write',
  ENOSPC: () => 'its disk is full: free some space',
  EDQUOT: () => 'your disk quota is used up: free some space',
};

/** The exit-2 error for `err` met while writing in `dir`, or null when `err` is not such a fault. */
export function unwritableDir(dir: string, err: unknown): IdcliError | null {
  const code = errCode(err);
  const fix = code === undefined ? undefined : FIXES[code];
  if (fix === undefined) return null;
  return new IdcliError(`cannot write to ${dir} (${code})`, ExitCode.USAGE, {
    hint: `${fix(dir)}, then run the command again`,
    cause: err,
  });
}

/** The exit-1 error for a file operation on `path` that failed otherwise, e.g. `cannot read <path> (EIO)`. */
export function fsError(what: string, path: string, err: unknown): IdcliError {
  const code = errCode(err);
  return new IdcliError(`${what} ${path}${code ? ` (${code})` : ''}`, ExitCode.INTERNAL, { cause: err });
}

export function errCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

/**
 * A directory idcli must write to but cannot, for a reason only the user can mend (permissions, a read-only mount,
 * a full disk): a configuration fault (exit 2) with its fix.
 */
import { ExitCode, IdcliError } from '../errors.js';
import { shellQuoted } from '../private-mode.js';

const FIXES: Record<string, (dir: string) => string> = {
  EACCES: (dir) => `make it writable for you (chmod 700 ${shellQuoted(dir)})`,
  EPERM: (dir) => `make it writable for you (chmod 700 ${shellQuoted(dir)})`,
  EROFS: () => 'it is on a read-only file system: mount that read-write',
  ENOSPC: () => 'its disk is full: free some space',
  EDQUOT: () => 'your disk quota is used up: free some space',
};

/** The exit-2 error for `err` met while writing in `dir`, or null when `err` is not such a fault. */
export function unwritableDir(dir: string, err: unknown): IdcliError | null {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const fix = code === undefined ? undefined : FIXES[code];
  if (fix === undefined) return null;
  return new IdcliError(`cannot write to ${dir} (${code})`, ExitCode.USAGE, {
    hint: `${fix(dir)}, then run the command again`,
    cause: err,
  });
}

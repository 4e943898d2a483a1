/**
 * Files that hold or lead to credentials are closed to other users. These helpers say so truthfully: a chmod that
 * failed is reported as failed, with the command that fixes it, and a path another user owns is refused (like ssh
 * refuses a key file it does not own), because its owner can read or replace what idcli would trust.
 */
import type { Stats } from 'node:fs';
import { ExitCode, IdcliError } from './errors.js';
import { shellQuote } from './shell-quote.js';
import { errCode } from './shape.js';

/** Exit 2 when `st` belongs to another user than this process's (POSIX; Windows has no uids). */
export function refuseForeignOwner(path: string, st: Stats): void {
  const uid = process.getuid?.();
  if (uid === undefined || st.uid === uid) return;
  throw new IdcliError(
    `refusing to use ${path}: it belongs to another user (uid ${st.uid}), not to you (uid ${uid})`,
    ExitCode.USAGE,
    { hint: 'use a config directory of your own (IDCLI_CONFIG_DIR), or have its owner hand it over (chown)' },
  );
}

/**
 * Runs `chmod` to take the group and other bits off, and returns the warning that tells what happened: `what` is
 * how the path was open ("accessible", "readable"), `mode` the one it gets.
 */
export function tightenMode(path: string, st: Stats, mode: number, what: string, chmod: () => void): string {
  const was = `0${(st.mode & 0o777).toString(8)}`;
  const want = `0${mode.toString(8)}`;
  try {
    chmod();
  } catch (err) {
    const code = errCode(err) ?? 'failed';
    return `${path} is ${what} by other users (mode ${was}) and could not be tightened (${code}); run: chmod ${want.slice(1)} ${shellQuote(path)}`;
  }
  return `${path} was ${what} by other users (mode ${was}); tightened to ${want}`;
}

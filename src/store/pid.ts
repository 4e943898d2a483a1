import { readFileSync } from 'node:fs';
import { errCode } from '../shape.js';
/** Whether a process named by its pid (in a lock or a temp file's name) still runs on this machine. */
export function processRunning(pid: number): boolean {
  // Not a pid: nothing can be told, so nothing may be taken away from it.
  if (!Number.isSafeInteger(pid) || pid <= 0) return true;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0); // signal 0: an existence check only
    return true;
  } catch (err) {
    return errCode(err) === 'EPERM'; // it exists, as another user's
  }
}

/**
 * When process `pid` started, as this boot's id and its start tick from /proc (field 22 of /proc/<pid>/stat), or
 * undefined where the system does not tell (no /proc, as on macOS, or the process is out of sight).
 */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // The command name in parentheses may hold spaces and parentheses itself: the fields follow the last `)`.
    const ticks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim();
    return ticks === undefined || !/^\d+$/.test(ticks) ? undefined : `${boot}/${ticks}`;
  } catch {
    return undefined;
  }
}

/**
 * Whether the process that wrote a record naming `pid` and its `start` (processStart) still runs: a pid that is not
 * a positive integer names no process, and where start times can be read, a pid taken since by another process (or
 * named by a record that does not say when its process started) is not the record's writer.
 */
export function recordedProcessRunning(pid: number, start: string | undefined): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0 || !processRunning(pid)) return false;
  const now = processStart(pid);
  return now === undefined || now === start;
}

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

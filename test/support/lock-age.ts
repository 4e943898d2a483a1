/**
 * A lock file made to look old, and the proof that a waiting run has looked at it since, without waiting for the
 * lock's staleness age to pass on the wall clock: the file's mtime is set back, and each read of it by the waiter
 * shows in its access time (the test resets the access time before each look it waits for, so that relatime too
 * records the next read).
 */
import { mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { until } from './until.js';

/** Far enough back that relatime updates the access time on the next read. */
const LONG_AGO_MS = 24 * 60 * 60 * 1000;

/** Sets the file's mtime `ms` back from now, as a lock untouched that long would be; its access time long before. */
export async function ageFile(path: string, ms: number): Promise<void> {
  const now = Date.now();
  await utimes(path, new Date(now - LONG_AGO_MS), new Date(now - ms));
}

/** Whether reading a file in `dir` shows in its access time here (not under noatime). */
export async function readsShowInAtime(dir: string): Promise<boolean> {
  const probeDir = await mkdtemp(join(dir, 'atime-'));
  try {
    const probe = join(probeDir, 'probe');
    await writeFile(probe, 'x');
    await ageFile(probe, 0);
    const before = (await stat(probe)).atimeMs;
    await readFile(probe);
    return (await stat(probe)).atimeMs > before;
  } finally {
    await rm(probeDir, { recursive: true, force: true });
  }
}

/**
 * Waits until something (the waiting run: nothing else reads the file) has read the file `times` times after now,
 * keeping its mtime; resolves early with 'replaced' if the file was removed or replaced by another one meanwhile.
 */
export async function readAgain(path: string, times: number, what: string): Promise<'read' | 'replaced'> {
  const first = await stat(path);
  for (let i = 0; i < times; i++) {
    await utimes(path, new Date(Date.now() - LONG_AGO_MS), first.mtime);
    const reset = (await stat(path)).atimeMs;
    const seen = await until(
      async () => {
        const now = await stat(path).catch(() => null);
        if (now === null || now.ino !== first.ino) return 'replaced' as const;
        return now.atimeMs > reset ? ('read' as const) : undefined;
      },
      20_000,
      `${what} (look ${i + 1} of ${times})`,
    );
    if (seen === 'replaced') return seen;
  }
  return 'read';
}

/**
 * Makes the lock at `path` (in `dir`) look well past `staleMs`, the age at which an unchecked lock is abandoned, then
 * sees the waiting run look at it a few times (a take-over would have removed the file by the third); where reads do
 * not show in the access time, waits on the wall clock for the lock to grow as old.
 */
export async function ageWhileWatched(path: string, dir: string, staleMs: number): Promise<void> {
  await ageFile(path, staleMs + 3000);
  if (await readsShowInAtime(dir)) await readAgain(path, 3, 'the waiting run to look at the old lock');
  else
    await until(
      async () => (Date.now() - (await stat(path)).mtimeMs > staleMs + 6000 ? true : undefined),
      60_000,
      'the paused lock to grow old',
    );
}

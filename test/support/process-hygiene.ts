/**
 * Fails a test file that leaves its test process other than it found it. The test processes are shared: each runs
 * file after file (vitest.config.ts), so a server, socket or child left open, a signal listener left registered, or
 * a changed environment, directory or umask would reach the files that run after it there, and make them pass or
 * fail by the order vitest happens to choose. Checked after the file's own hooks, so the file is named, not its
 * victim.
 */
import { afterAll } from 'vitest';
import { leftovers, type Snapshot, snapshot } from './process-state.js';

/** How long a handle whose close was asked for may take to go. */
const CLOSE_DEADLINE_MS = 5_000;

// Node opens a pipe for stdout and stderr on their first use, which may come in any file: opened here, they are
// the process's from the start.
for (const stream of [process.stdout, process.stderr]) void stream.writable;

// Taken as this setup file is run, before the test file is imported: what the file does as it loads (a top-level
// await, a server started at module scope) is the file's too, and a snapshot in beforeAll would count it as the
// process's own.
let before: Snapshot | undefined = snapshot();

afterAll(async () => {
  if (before === undefined) return;
  const start = before;
  before = undefined;
  const found = await leftovers(start, CLOSE_DEADLINE_MS);
  if (found.length > 0)
    throw new Error(`this file leaves its test process changed for the files after it: ${found.join('; ')}`);
});

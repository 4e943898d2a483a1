/**
 * Needs a process: a test run of its own, interrupted. The run's copy of the CLI for other users
 * (test/support/global-setup.ts) is removed when the run is stopped with SIGINT or SIGTERM, not only when it ends.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT, tempDir } from '../support/cli.js';
import { until } from '../support/until.js';

describe.each(['SIGINT', 'SIGTERM'] as const)('a test run stopped with %s', (signal) => {
  let dir: { path: string; cleanup: () => Promise<void> };
  beforeEach(async () => {
    dir = await tempDir();
  });
  afterEach(() => dir.cleanup());

  it('removes its copy of the CLI', async () => {
    const at = join(dir.path, 'copy-at');
    const run = spawn(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
        'run',
        '--config',
        'test/support/fixtures/interrupted.config.ts',
      ],
      // A group of its own: vitest stopped by a signal leaves its test process behind, which the group's kill ends.
      { cwd: ROOT, env: { ...process.env, IDCLI_COPY_AT: at, NO_COLOR: '1' }, stdio: 'ignore', detached: true },
    );
    const ended = new Promise((resolve) => run.once('close', resolve));
    try {
      const copy = dirname(
        // The file may be seen made and still empty: read until the path is in it.
        await until(() => (existsSync(at) ? readFileSync(at, 'utf8') || undefined : undefined), 30_000, 'the copy'),
      );
      expect(existsSync(copy)).toBe(true);
      run.kill(signal);
      await ended;
      expect(existsSync(copy), copy).toBe(false);
    } finally {
      signalGroup(run.pid!, 'SIGKILL');
      await ended;
      await until(() => (signalGroup(run.pid!, 0) ? undefined : true), 20_000, "the run's processes to end");
    }
  }, 60_000);
});

/** Sends `signal` to every process of the group; false once none is left. */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

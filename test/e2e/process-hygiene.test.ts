/**
 * Needs a process: a test run of its own. A test file that changes its process as it is imported, before its first
 * hook, fails the run as one that changes it in a test does (test/support/process-hygiene.ts).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

it('a file that changes its process as it is imported fails, named with what it changed', async () => {
  const run = await promisify(execFile)(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
      'run',
      '--config',
      'test/support/fixtures/leaves-at-import.config.ts',
    ],
    { cwd: ROOT, env: { ...process.env, FORCE_COLOR: undefined, NO_COLOR: '1' } },
  ).then(
    (r) => ({ code: 0, ...r }),
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
  expect(run.code, run.stdout).toBe(1);
  expect(`${run.stdout}${run.stderr}`).toContain(
    'this file leaves its test process changed for the files after it: process.env.IDCLI_LEFT_AT_IMPORT changed',
  );
});

/**
 * Needs a process: a test run of its own, under scripts/with-keyring.sh, whose gnome-keyring daemon dies.
 * When the suite's gnome-keyring dies under the tests, the run says so in one line naming the test, fails, and no
 * second daemon is started in its place (scripts/with-keyring.sh, keyring-watch.ts, dbus-session.conf).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { KEYCHAIN_TESTABLE } from '../support/harness.js';
import { ROOT } from '../support/store.js';

const DIED =
  'test/support/fixtures/keyring-dies.ts > a keyring that dies > is killed with SIGTRAP, as a GLib error ends it';

describe.runIf(KEYCHAIN_TESTABLE)('a gnome-keyring that dies under the tests', () => {
  it('is named once by the test it died under and by with-keyring, and the run fails though its tests passed', async () => {
    const run = await promisify(execFile)(
      'bash',
      [
        join(ROOT, 'scripts', 'with-keyring.sh'),
        process.execPath,
        join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
        'run',
        '--config',
        'test/support/fixtures/keyring-dies.config.ts',
      ],
      { cwd: ROOT, env: { ...process.env, IDCLI_TEST_KEYRING_DIR: undefined, FORCE_COLOR: undefined, NO_COLOR: '1' } },
    ).then(
      () => ({ code: 0, stdout: '', stderr: '' }),
      (err: { code: number; stdout: string; stderr: string }) => err,
    );
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/Tests\s+2 passed \(2\)/); // including: no daemon answered after it
    const lines = run.stderr.split('\n').filter((l) => l.includes('died during'));
    expect(lines).toEqual([
      `gnome-keyring-daemon died during ${DIED} (killed by SIGTRAP)`,
      `with-keyring: gnome-keyring-daemon died during ${DIED} (killed by SIGTRAP); the keychain tests after it fail: nothing restarts it`,
    ]);
  });
});

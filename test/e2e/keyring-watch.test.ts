/**
 * Needs a process: test runs of their own, under scripts/with-keyring.sh, whose gnome-keyring daemon dies.
 * When the suite's gnome-keyring dies under the tests, D-Bus starts another over the same records on the next call,
 * as on a desktop, and the death is named in one line by the test it died under and by with-keyring at the end. A
 * death of gnome-keyring's own known crash leaves the run's result to its tests; any other fails the run
 * (scripts/with-keyring.sh, scripts/keyring-daemon.sh, test/support/keyring-watch.ts).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { KEYCHAIN_TESTABLE } from '../support/harness.js';
import { ROOT } from '../support/store.js';

const died = (how: string) => `test/support/fixtures/keyring-dies.ts > a keyring that dies > dies of ${how}`;
const CRASH =
  "killed by SIGTRAP: GLib-ERROR **: g_variant_new: expected GVariant of type 'v' but received value has type '(null)'";

function runDying(how: 'glib-error' | 'known-crash') {
  return promisify(execFile)(
    'bash',
    [
      join(ROOT, 'scripts', 'with-keyring.sh'),
      process.execPath,
      join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
      'run',
      '--config',
      'test/support/fixtures/keyring-dies.config.ts',
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        IDCLI_TEST_KEYRING_DIR: undefined,
        KEYRING_DIES_OF: how,
        FORCE_COLOR: undefined,
        NO_COLOR: '1',
      },
    },
  ).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
}

const deathLines = (stderr: string) => stderr.split('\n').filter((l) => l.includes('died during'));

describe.runIf(KEYCHAIN_TESTABLE).concurrent('a gnome-keyring that dies under the tests', () => {
  it('of anything else: is started again, named by its test and by with-keyring, and the run fails', async () => {
    const run = await runDying('glib-error');
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toMatch(/Tests\s+2 passed \(2\)/); // including: the next call found another, and the record
    expect(deathLines(run.stderr)).toEqual([
      `gnome-keyring-daemon died during ${died('glib-error')} (killed by SIGTRAP)`,
      `with-keyring: gnome-keyring-daemon died during ${died('glib-error')} (killed by SIGTRAP); D-Bus starts another on the next call; the run fails`,
    ]);
  });

  it('of its known crash: is started again and named, and the run is what its tests are', async () => {
    const run = await runDying('known-crash');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/Tests\s+2 passed \(2\)/);
    expect(deathLines(run.stderr)).toEqual([
      `gnome-keyring-daemon died during ${died('known-crash')} (${CRASH})`,
      `with-keyring: gnome-keyring-daemon died during ${died('known-crash')} (${CRASH}); D-Bus starts another on the next call; gnome-keyring's crash on a caller that left while it opened the caller's session`,
    ]);
  });
});

/**
 * `login --timeout` covers the wait for another idcli that holds these credentials' lock: past the deadline the
 * sign-in ends (exit 3, naming the holder) before any browser opens; a holder that lets go in time costs the wait
 * only what it took.
 *
 * Each login runs in process on a clock the test moves, so a deadline is the clock's, not the machine's pace; the
 * holder is this process, as a refreshing idcli would be (a live pid, a fresh heartbeat). The tests share nothing
 * (each has its own harness), so they run at the same time.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockPathFor, withLock } from '../../../src/store/lock.js';
import { DEFAULT_KEYCHAIN_TIMEOUT_MS } from '../../../src/store/keyring-client.js';
import { FakeClock } from '../../support/clock.js';
import { until } from '../../support/until.js';
import {
  authorizeQueries,
  authorizeUrlIn,
  describeEachStore,
  type Harness,
  harness,
  login,
  type StoreKind,
} from '../../support/harness.js';

/** The lock's polls, which the test lets fire; the sign-in's own timeout (seconds) is longer than any of them. */
const isPoll = (ms: number) => ms <= 300;

/**
 * Every timer but the keychain's own timeout: a keychain call is real I/O, which the moved clock would otherwise cut
 * short while the daemon is still answering. A keychain that really hangs still fails the test at runUntilSettled's
 * deadline.
 */
const notKeychain = (ms: number) => ms !== DEFAULT_KEYCHAIN_TIMEOUT_MS;

/** A harness signed in (in this process: it is set-up), for `test`; closed after it, whatever the outcome. */
async function signedIn<T>(store: StoreKind, test: (h: Harness) => Promise<T>): Promise<T> {
  const h = await harness({ store });
  try {
    await login(h, [], {}, 'command');
    return await test(h);
  } finally {
    await h.close();
  }
}

/** Holds the sign-in's lock from this process until the returned function is called. */
async function holdLock(h: Harness): Promise<() => Promise<void>> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let taken!: () => void;
  const acquired = new Promise<void>((resolve) => (taken = resolve));
  const done = withLock(
    lockPathFor(join(h.dir, 'config'), h.key()),
    async () => {
      taken();
      await held;
    },
    { staleMs: 10_000 },
  );
  await acquired;
  return async () => {
    release();
    await done;
  };
}

describe.concurrent('login --timeout, each test at once', () => {
  describeEachStore('login --timeout while another idcli holds the lock', (store) => {
    it('ends at the deadline with exit 3 naming the holder, before any browser opens', async () => {
      await signedIn(store, async (h) => {
        const release = await holdLock(h);
        try {
          const opened = authorizeQueries(h.emu).length;
          const clock = new FakeClock();
          const started = clock.now();
          const r = await clock.runUntilSettled(
            h.command(['login', '--timeout', '2'], {}, { clock }),
            'the login',
            notKeychain,
          );
          expect(r.code, r.stderr).toBe(3);
          // At the deadline itself: the last pause is cut short to end there.
          expect(clock.now() - started).toBe(2000);
          expect(r.stdout).toBe('');
          expect(r.stderr).toMatch(
            new RegExp(
              `^error: the sign-in timed out waiting for another idcli \\(pid ${process.pid} on \\S+\\) to finish with these credentials \\(\\S+\\.lock\\); try again once it is done, or give login a longer --timeout\\n$`,
            ),
          );
          expect(authorizeQueries(h.emu)).toHaveLength(opened);
        } finally {
          await release();
        }
        // Once it is let go, the sign-in goes through.
        await login(h);
      });
    });

    it('a holder that lets go in time: the sign-in goes on, in the same run', async () => {
      // Let go once the login says it waits for the lock (under --verbose, when it first finds the lock held).
      const r = await loginWhileHeld(store, ['--timeout', '30'], 0);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('waiting for another idcli to finish with these credentials');
      expect(r.stderr).toContain('Signed in');
    });

    it('a holder that lets go late: the browser gets what is left, and the timeout still names the whole --timeout', async () => {
      // Let go a while after the login says it waits: that while is taken from the browser's wait, not from the message.
      const r = await loginWhileHeld(store, ['--timeout', '6', '--no-browser'], 2000);
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(/error: sign-in timed out after 6 s/);
      // The whole run ended at its --timeout: the browser's wait was what the lock's left of it.
      expect(r.clockMs).toBe(6000);
    });
  });
});

/**
 * `login args --verbose` in process while this process holds the lock, let go `lateMs` of the login's clock after it
 * says it waits; then the login goes on, its clock moved only by the lock's polls when `lateMs` is 0 (the browser
 * signs in), and by every timer but the keychain's otherwise (the sign-in times out). `clockMs` is how far the login's clock went.
 */
async function loginWhileHeld(store: StoreKind, args: string[], lateMs: number) {
  return signedIn(store, async (h) => {
    const release = await holdLock(h);
    const clock = new FakeClock();
    const started = clock.now();
    let stderr = '';
    const run = h.command(['login', ...args, '--verbose'], {}, { clock, onStderr: (text) => (stderr += text) });
    run.catch(() => {});
    await until(() => (stderr.includes('waiting for another idcli') ? true : undefined), 20_000, 'the wait');
    const waitFrom = clock.now();
    while (clock.now() - waitFrom < lateMs) await clock.elapseFirst(isPoll, "the lock's poll");
    await release();
    if (lateMs > 0) {
      // The store's check comes before the address is shown: only once it is shown may the clock run on to the
      // timeout, past the due time of any keychain call still being answered.
      const shown = until(() => authorizeUrlIn(stderr), 20_000, 'the sign-in address');
      await clock.runUntilSettled(shown, 'the sign-in address', isPoll);
    }
    const r = await clock.runUntilSettled(run, 'the login', lateMs === 0 ? isPoll : notKeychain);
    return { ...r, clockMs: clock.now() - started };
  });
}

/**
 * The wait for the fleet's lock in etcd (src/store/etcd-lock.ts) is counted on the run's clock: a FakeClock moved on
 * by the test, while another holder keeps the lock of a real three-member cluster. Through the store's withLock, and
 * through `token --refresh` and `login --timeout` in this process, which take their limits to the lock (the sign-in
 * session, src/oauth/session.ts); one cluster serves the three.
 */
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ExitCode, IdcliError } from '../../src/errors.js';
import { FakeClock } from '../support/clock.js';
import { clusterForFile, fleet, harnessFor } from '../support/etcd-fleet.js';
import { authorizeQueries, type Harness, refreshGrants } from '../support/harness.js';
import { until } from '../support/until.js';

const cluster = clusterForFile();
const HOLDER = `pid ${process.pid} on ${hostname()}`;
/** Each etcd member's deadline, on the run's clock too (MEMBER_DEADLINE_MS of src/store/etcd-client.ts). */
const MEMBER_DEADLINE_MS = 5_000;

/** Takes the fleet's lock on the sign-in from this process and keeps it until the returned function is called. */
async function holdLock(h: Harness, f: ReturnType<typeof fleet>): Promise<() => Promise<void>> {
  const s = f.store();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let taken!: () => void;
  const acquired = new Promise<void>((resolve) => (taken = resolve));
  const done = s.withLock(
    h.key(),
    async () => {
      taken();
      await held;
    },
    {},
  );
  await Promise.race([acquired, done]);
  return async () => {
    release();
    await done.finally(() => s.close());
  };
}

/**
 * Moves `clock` to `at` - 1 ms, where the waiting `work` must look at the lock once more and wait on, then to `at`,
 * where it must give up; resolves or rejects as `work` does. One move takes the clock there: the pause that ends on
 * the way wakes the run, which then reads the moved clock.
 */
async function givesUpAt<T>(clock: FakeClock, work: Promise<T>, at: number): Promise<T> {
  let ended = false;
  const watched = work.finally(() => (ended = true));
  watched.catch(() => {});
  // A look at the lock is under way while a member's deadline is pending: its request has not been answered yet.
  const pausing = () => clock.pending().length > 0 && !clock.pending().includes(MEMBER_DEADLINE_MS);
  const nextLook = () => until(() => (ended ? 'ended' : pausing() ? 'pausing' : undefined), 10_000, 'a pause');
  // Between two looks at the lock, on its clock: the only timer of the run.
  expect(await nextLook()).toBe('pausing');
  expect(clock.pending()).toHaveLength(1);
  clock.advance(at - 1 - clock.now());
  expect(await nextLook(), 'gave up before its limit').toBe('pausing');
  // The last pause is cut short to end at the limit itself.
  expect(clock.pending()).toEqual([1]);
  clock.advance(1);
  return watched;
}

describe.concurrent("the wait for the fleet's lock, on the run's clock", () => {
  it("the store's withLock gives up at 60 s of its clock, naming the lock and its holder", async (t) => {
    const h = await harnessFor(t);
    const f = fleet(h, cluster());
    const release = await holdLock(h, f);
    const s = f.store();
    try {
      const clock = new FakeClock();
      const limit = clock.now() + 60_000;
      let ran = false;
      const err = await givesUpAt(
        clock,
        s.withLock(h.key(), async () => (ran = true), { clock }),
        limit,
      ).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(ran).toBe(false);
      expect(err).toBeInstanceOf(IdcliError);
      expect(err).toMatchObject({
        code: 'ETCD_LOCK_TIMED_OUT',
        exitCode: ExitCode.NETWORK,
        message: `timed out after 60 s waiting for the etcd lock ${f.lockKey()} (held by ${HOLDER})`,
      });
      expect(clock.now()).toBe(limit);
    } finally {
      s.close();
      await release();
    }
  }, 60_000);

  it('`token --refresh` waits 60 s of its clock for the holder, then exits 4 naming the lock', async (t) => {
    const h = await harnessFor(t);
    const f = fleet(h, cluster());
    await f.signIn();
    const release = await holdLock(h, f);
    try {
      const clock = new FakeClock();
      const started = clock.now();
      const r = await givesUpAt(clock, h.command(['token', '--refresh'], f.machine(1), { clock }), started + 60_000);
      expect(r.code, r.stderr).toBe(4);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `error: timed out after 60 s waiting for the etcd lock ${f.lockKey()} (held by ${HOLDER}); another machine is refreshing this sign-in; a holder that died frees it within 10 s\n`,
      );
      expect(refreshGrants(h)).toHaveLength(0);
    } finally {
      await release();
    }
  }, 60_000);

  it('`login --timeout` ends the wait at its deadline on its clock: exit 3, before any browser opens', async (t) => {
    const h = await harnessFor(t);
    const f = fleet(h, cluster());
    const release = await holdLock(h, f);
    try {
      const clock = new FakeClock();
      const started = clock.now();
      const login = h.command(['login', '--timeout', '5'], f.machine(1), { clock });
      const r = await givesUpAt(clock, login, started + 5000);
      expect(r.code, r.stderr).toBe(3);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `error: the sign-in timed out waiting for another idcli (${HOLDER}) to finish with these credentials (${f.lockKey()}); try again once it is done, or give login a longer --timeout\n`,
      );
      expect(authorizeQueries(h.emu)).toHaveLength(0);
    } finally {
      await release();
    }
  }, 60_000);
});

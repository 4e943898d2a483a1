/**
 * A second and a third stop signal during a refresh, sent in process: the grace, on a FakeClock, and leaving at once
 * (see ./refresh-signals.ts).
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../support/clock.js';
import { describeEachStore } from '../../support/harness.js';
import {
  expectSignInKept,
  FIRST,
  GIVEN_UP,
  refreshing,
  SECOND,
  tokenSignalled,
} from '../../support/refresh-signals.js';

const GRACE_MS = 5000;

// Each test has its own harness and clock: they run at the same time.
describe.concurrent('a stop signal during a refresh, each test at once', () => {
  describeEachStore('a stop signal during a refresh', (store) => {
    it('a second Ctrl-C waits for an answer due within its grace, which is saved', async (t) => {
      const h = await refreshing(store, 1000, t);
      const generation = (await h.record())!.generation;
      // Started a grace early, so the saved record is not stamped after the next run starts (a concurrent refresh).
      const clock = new FakeClock(Date.now() - GRACE_MS);
      const { run } = await tokenSignalled(h, 'SIGINT', 2, clock);
      expect(clock.pending()).toContain(GRACE_MS);
      // The last moment of the grace still waits: the answer, due by then, is kept.
      clock.advance(GRACE_MS - 1);
      const r = await run;
      expect(r.code).toBe(130);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(FIRST('Ctrl-C') + SECOND('Ctrl-C'));
      await expectSignInKept(h, generation);
    });

    it('a second Ctrl-C gives up an answer not due within its grace, and says what that may have cost', async (t) => {
      const h = await refreshing(store, 60_000, t);
      const before = await h.record();
      const clock = new FakeClock();
      const started = clock.now();
      const { run } = await tokenSignalled(h, 'SIGINT', 2, clock);
      await clock.elapse(GRACE_MS, 'the grace of the second Ctrl-C');
      const r = await run;
      expect(clock.now() - started).toBe(GRACE_MS);
      expect(r.code).toBe(130);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(FIRST('Ctrl-C') + SECOND('Ctrl-C') + GIVEN_UP);
      // Nothing was saved: what happens to the sign-in is up to the server, as the message says.
      expect(await h.record()).toEqual(before);
    });

    it('a third Ctrl-C leaves at once, without waiting for the grace', async (t) => {
      const h = await refreshing(store, 60_000, t);
      const clock = new FakeClock();
      const started = clock.now();
      const { run } = await tokenSignalled(h, 'SIGINT', 3, clock);
      // Ended by the third signal itself: before anything else this process does, the refresh's socket included.
      const ended = await Promise.race([run.then(() => true), new Promise((r) => setImmediate(() => r(false)))]);
      expect(ended).toBe(true);
      const r = await run;
      expect(clock.now()).toBe(started);
      expect(r.code).toBe(130);
      expect(r.stderr).toBe(FIRST('Ctrl-C') + SECOND('Ctrl-C'));
    });

    it('a second SIGTERM whose grace runs out ends the run with 143, as the signal says', async (t) => {
      const h = await refreshing(store, 60_000, t);
      const clock = new FakeClock();
      const { run } = await tokenSignalled(h, 'SIGTERM', 2, clock);
      await clock.elapse(GRACE_MS, 'the grace of the second SIGTERM');
      const r = await run;
      expect(r.code).toBe(143);
      expect(r.stderr).toBe(FIRST('SIGTERM') + SECOND('SIGTERM') + GIVEN_UP);
    });

    it('a third SIGHUP leaves at once with 129, as the signal says', async (t) => {
      const h = await refreshing(store, 60_000, t);
      const clock = new FakeClock();
      const { run } = await tokenSignalled(h, 'SIGHUP', 3, clock);
      const r = await run;
      expect(clock.pending()).toContain(GRACE_MS);
      expect(r.code).toBe(129);
      expect(r.stderr).toBe(FIRST('SIGHUP') + SECOND('SIGHUP'));
    });
  });
});

/** A second and a third stop signal during a refresh: the grace, and leaving at once (see test/support/refresh-signals.ts). */
import { describe, expect, it } from 'vitest';
import { describeEachStore } from '../support/harness.js';
import { expectSignInKept, FIRST, GIVEN_UP, refreshing, SECOND, tokenStoppedBy } from '../support/refresh-signals.js';

// Each test has its own harness and waits on real time: they run at the same time.
describe.concurrent('a stop signal during a refresh, each test at once', () => {
  describeEachStore('a stop signal during a refresh', (store) => {
    it('a second Ctrl-C waits for an answer due within its grace, which is saved', async (t) => {
      const h = await refreshing(store, 2000, t);
      const generation = (await h.record())!.generation;
      const r = await tokenStoppedBy(h, 'SIGINT', 2);
      expect(r.signal).toBeNull();
      expect(r.code).toBe(130);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(FIRST('Ctrl-C') + SECOND('Ctrl-C'));
      await expectSignInKept(h, generation);
    });

    it('a second Ctrl-C gives up an answer not due within its grace, and says what that may have cost', async (t) => {
      const h = await refreshing(store, 60_000, t);
      const before = await h.record();
      const r = await tokenStoppedBy(h, 'SIGINT', 2);
      expect(r.signal).toBeNull();
      expect(r.code).toBe(130);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(FIRST('Ctrl-C') + SECOND('Ctrl-C') + GIVEN_UP);
      // Nothing was saved: what happens to the sign-in is up to the server, as the message says.
      expect(await h.record()).toEqual(before);
    });

    it('a third Ctrl-C leaves at once, without waiting for the grace', async (t) => {
      const h = await refreshing(store, 60_000, t);
      const r = await tokenStoppedBy(h, 'SIGINT', 3);
      expect(r.signal).toBeNull();
      expect(r.code).toBe(130);
      expect(r.stderr).toBe(FIRST('Ctrl-C') + SECOND('Ctrl-C'));
    });
  });
});

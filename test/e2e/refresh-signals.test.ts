// Needs a process: the signals come from the system to the built CLI, and the exit code is how it ends.
/**
 * One test per rule of stop signals during a refresh, with real signals (see ./refresh-signals.ts); the rules in
 * full, both stores and the grace, are tested in process in test/commands/token/signals.test.ts and signals-grace.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  expectSignInKept,
  FIRST,
  PROCESS_STORE,
  refreshing,
  SECOND,
  tokenStoppedBy,
} from '../support/refresh-signals.js';

// Each test has its own harness and waits on real time: they run at the same time.
describe.concurrent(`a real stop signal during a refresh (${PROCESS_STORE} store)`, () => {
  it('SIGINT: one line says the refresh is finished first; it is saved, and the run ends with 130', async (t) => {
    const h = await refreshing(PROCESS_STORE, 1500, t);
    const generation = (await h.record())!.generation;
    const r = await tokenStoppedBy(h, 'SIGINT', 1);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(130);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(FIRST('Ctrl-C'));
    await expectSignInKept(h, generation);
  });

  it('a third Ctrl-C leaves at once, without waiting for the grace', async (t) => {
    const h = await refreshing(PROCESS_STORE, 60_000, t);
    const r = await tokenStoppedBy(h, 'SIGINT', 3);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(130);
    expect(r.stderr).toBe(FIRST('Ctrl-C') + SECOND('Ctrl-C'));
  });
});

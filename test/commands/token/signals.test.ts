/** A first stop signal during a refresh, sent in process: the refresh is finished and saved (see ./refresh-signals.ts). */
import { describe, expect, it } from 'vitest';
import { describeEachStore } from '../../support/harness.js';
import { expectSignInKept, FIRST, refreshing, tokenSignalled } from '../../support/refresh-signals.js';

// Each test has its own harness and waits for the emulator's late answer: they run at the same time.
describe.concurrent('a stop signal during a refresh, each test at once', () => {
  describeEachStore('a stop signal during a refresh', (store) => {
    for (const [signal, code, key] of [
      ['SIGINT', 130, 'Ctrl-C'],
      ['SIGTERM', 143, 'SIGTERM'],
    ] as const) {
      it(`${signal}: one line says the refresh is finished first; it is saved, and the run ends with ${code}`, async (t) => {
        const h = await refreshing(store, 1000, t);
        const generation = (await h.record())!.generation;
        const r = await (await tokenSignalled(h, signal, 1)).run;
        expect(r.code).toBe(code);
        expect(r.stdout).toBe('');
        expect(r.stderr).toBe(FIRST(key));
        await expectSignInKept(h, generation);
      });
    }
  });
});

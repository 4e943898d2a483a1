/**
 * A storm of 429s that ask for no wait (`Retry-After: 0`, or a date already past), in this process (runCommand)
 * against the emulator: a retry never comes sooner than the backoff floor of its attempt, so the retries outlast a storm of
 * STORM_MS and the walk writes exactly what `-c 1` writes on a healthy server, whatever the concurrency or page size.
 * The run and the emulator share one FakeClock, so the storm and the retries' waits are counted, not waited.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../emulator/index.js';
import { FakeClock } from '../../support/clock.js';
import { listCommand, type ListEnv, listEnv, ndjson, plainItems } from '../../support/list.js';

const ITEMS = plainItems(250);
/**
 * Every request gets a 429 until this long after the first one did. The floors of the first four retries add up to
 * more (100 + 200 + 400 + 800 ms), so every page's fifth attempt at the latest comes after the storm.
 */
const STORM_MS = 1000;
const PAST = 'Thu, 01 Jan 1970 00:00:00 GMT';
/** The least wait before each retry (docs/cli.md, Retries and time limits): 100 ms, doubling. */
const FLOORS_MS = [100, 200, 400, 800, 1600];
/** A retry's wait is less than twice its floor; the HTTP time limits pending meanwhile are far longer. */
const isRetryWait = (ms: number): boolean => ms < 2 * FLOORS_MS.at(-1)!;

/**
 * A fresh emulator serving ITEMS at /v1/items, and a list environment for it; its storms run and its requests are
 * stamped on `clock` when one is given.
 */
async function serve(clock?: FakeClock): Promise<{ emu: Emulator; env: ListEnv & { cleanup: () => Promise<void> } }> {
  const emu = await startEmulator(clock && { clock, now: () => clock.now() });
  const env = await listEnv(emu, emu.mintTokens().access_token);
  emu.setCollection('/v1/items', { type: 'offset', items: [...ITEMS] });
  return { emu, env };
}

let healthy: Buffer;

beforeAll(async () => {
  const { emu, env } = await serve();
  try {
    const r = await listCommand(env, ['/v1/items', '--concurrency', '1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(ITEMS));
    healthy = r.stdoutBytes;
  } finally {
    await emu.close();
    await env.cleanup();
  }
}, 60_000);

// Each case has an emulator and a clock of its own, so the cases run at the same time.
describe.concurrent('idcli list: a storm of 429s asking for no wait', () => {
  const cases = ['0', PAST].flatMap((retryAfter) =>
    ['1', 'auto', '16'].flatMap((concurrency) =>
      ['7', '100'].map((pageSize) => ({ retryAfter, concurrency, pageSize })),
    ),
  );

  it.for(cases)(
    'Retry-After: $retryAfter, -c $concurrency, --page-size $pageSize: the walk outlasts it, output exact',
    { timeout: 60_000 },
    async ({ retryAfter, concurrency, pageSize }, { onTestFinished }) => {
      const clock = new FakeClock();
      const { emu, env } = await serve(clock);
      onTestFinished(async () => {
        await emu.close();
        await env.cleanup();
      });
      emu.inject({ path: '/v1/items', forMs: STORM_MS, fault: { kind: 'status', status: 429, retryAfter } });
      const r = await clock.runUntilSettled(
        listCommand(env, ['/v1/items', '--concurrency', concurrency, '--page-size', pageSize], { clock }),
        'the walk',
        isRetryWait,
      );
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdoutBytes.equals(healthy)).toBe(true);

      const logged = emu.requests.filter((q) => q.path === '/v1/items');
      expect(logged.some((q) => q.status === 429)).toBe(true);
      // Each page's attempts, in order: 429s, then one 200; after its nth 429 (0-based), the next attempt came at
      // least that retry's floor later on the shared clock, which moves only when a wait is due.
      const byUrl = new Map<string, typeof logged>();
      for (const q of logged) byUrl.set(q.url, [...(byUrl.get(q.url) ?? []), q]);
      expect(byUrl.size).toBe(Math.ceil(ITEMS.length / Number(pageSize)));
      for (const attempts of byUrl.values()) {
        expect(attempts.map((q) => q.status)).toEqual([...attempts.slice(1).map(() => 429), 200]);
        for (let n = 0; n + 1 < attempts.length; n++) {
          const gap = attempts[n + 1]!.time - attempts[n]!.time;
          expect(gap).toBeGreaterThanOrEqual(FLOORS_MS[n]!);
        }
      }
      expect(emu.errors).toEqual([]);
    },
  );
});

/**
 * The walk's page requests on the run's clock: a Retry-After holds back every new page request for the whole wait it
 * asks for, counted on the clock the run was given (deps.clock), so this test counts the wait instead of living it.
 * `idcli list` runs in this process (runCommand) against the emulator, which stamps its requests on the same clock.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../emulator/index.js';
import { FakeClock } from '../support/clock.js';
import { listCommand, listEnv, ndjson, plainItems } from '../support/list.js';

const ITEMS = plainItems(200);
const PAGE_SIZE = 10;
/** Under the 60 s that idcli honours at most (docs/cli.md, Retries and time limits). */
const RETRY_AFTER_S = 50;

describe('idcli list --concurrency auto: a Retry-After on the run clock', () => {
  it('sends no new page request before the wait the server asked for has passed, then completes the walk', async () => {
    const clock = new FakeClock();
    const emu = await startEmulator({ clock, now: () => clock.now() });
    const env = await listEnv(emu, emu.mintTokens().access_token);
    try {
      emu.setCollection('/v1/items', { type: 'offset', items: [...ITEMS] });
      emu.inject({
        path: '/v1/items',
        params: { pageIndex: '3' },
        fault: { kind: 'status', status: 429, retryAfter: String(RETRY_AFTER_S) },
      });
      const r = await clock.runUntilSettled(
        listCommand(env, ['/v1/items', '--page-size', String(PAGE_SIZE)], { clock }),
        'the walk',
        // The retry's wait and the window's hold, not the HTTP time limits pending meanwhile.
        (ms) => ms >= RETRY_AFTER_S * 1000 && ms <= 60_000,
      );
      // A wait this long is told, once.
      expect(r.stderr.split('\n').filter(Boolean)).toEqual([expect.stringMatching(/^HTTP 429; retrying in 50 s /)]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(ndjson(ITEMS));

      const logged = emu.requests.filter((q) => q.path === '/v1/items');
      const refused = logged.find((q) => q.status === 429);
      expect(refused).toBeDefined();
      const resumeAt = refused!.time + RETRY_AFTER_S * 1000;
      // Requests already sent when the 429 came were answered; none was sent after it until its wait had passed.
      const later = logged.slice(logged.indexOf(refused!) + 1);
      const sentEarly = later.filter((q) => q.time < resumeAt);
      expect(sentEarly.every((q) => q.status === 200 && q.time === refused!.time)).toBe(true);
      expect(later.filter((q) => q.time >= resumeAt).length).toBeGreaterThan(0);
      // Every page was asked for; the refused one twice.
      const pages = new Set(logged.map((q) => new URL(q.url, emu.baseUrl).searchParams.get('pageIndex')));
      expect(pages.size).toBe(ITEMS.length / PAGE_SIZE);
    } finally {
      await emu.close();
      await env.cleanup();
    }
  });
});

/** The HTTP time limit's default (IDCLI_HTTP_TIMEOUT): pending during each request, never let fire here. */
const HTTP_DEADLINE_MS = 300_000;
/** The most a Retry-After is honoured (src/http/retry.ts). */
const CAP_MS = 60_000;

describe('idcli list: a Retry-After that lies, on every page', () => {
  const SMALL = plainItems(40);
  const lies = fc.oneof(
    fc.constantFrom('0', '-5', '-0', '1.5', '1e3', 'soon', '', '9'.repeat(400), '4294967296', '61', '3600'),
    fc.integer({ min: 0, max: 10_000 }).map(String),
    // HTTP-dates from a day past to a day ahead of the run's clock.
    fc.integer({ min: -86_400, max: 86_400 }).map((s) => ({ dateOffsetS: s })),
  );

  it('waits no less than nothing and no more than the cap between requests, and completes the walk', async () => {
    await fc.assert(
      fc.asyncProperty(lies, fc.constantFrom('auto', '1', '4', '32'), async (lie, concurrency) => {
        const clock = new FakeClock();
        const emu = await startEmulator({ clock, now: () => clock.now() });
        const env = await listEnv(emu, emu.mintTokens().access_token);
        try {
          emu.setCollection('/v1/items', { type: 'offset', items: [...SMALL] });
          const retryAfter =
            typeof lie === 'string' ? lie : new Date(clock.now() + lie.dateOffsetS * 1000).toUTCString();
          for (let page = 0; page < SMALL.length / PAGE_SIZE; page++)
            emu.inject({
              path: '/v1/items',
              params: { pageIndex: String(page) },
              fault: { kind: 'status', status: 429, retryAfter },
            });
          const waits: number[] = [];
          const r = await clock.runUntilSettled(
            listCommand(env, ['/v1/items', '--page-size', String(PAGE_SIZE), '--concurrency', concurrency], {
              clock,
            }),
            'the walk',
            (ms) => {
              if (ms !== HTTP_DEADLINE_MS) waits.push(ms);
              return ms !== HTTP_DEADLINE_MS;
            },
          );
          expect(r.code).toBe(0);
          expect(r.stdout).toBe(ndjson(SMALL));
          expect(Math.min(...waits)).toBeGreaterThanOrEqual(0);
          expect(Math.max(...waits)).toBeLessThanOrEqual(CAP_MS);
          const times = emu.requests.filter((q) => q.path === '/v1/items').map((q) => q.time);
          for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeLessThanOrEqual(CAP_MS);
          // Every wait told is one that was taken, so within the cap too.
          for (const m of r.stderr.matchAll(/retrying in (-?[\d.]+) s/g)) expect(Number(m[1])).toBeLessThanOrEqual(60);
        } finally {
          await emu.close();
          await env.cleanup();
        }
      }),
      { numRuns: 16 },
    );
  }, 120_000);
});

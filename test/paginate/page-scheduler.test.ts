/**
 * The walk's page requests on the run's clock: a Retry-After holds back every new page request for the whole wait it
 * asks for, counted on the clock the run was given (deps.clock), so this test counts the wait instead of living it.
 * `idcli list` runs in this process (runCommand) against the emulator, which stamps its requests on the same clock.
 */
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

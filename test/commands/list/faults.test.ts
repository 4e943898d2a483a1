import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../support/clock.js';
import { until } from '../../support/until.js';
import { listCommand, ndjson, plainItems, resumeUrl, eachTest, failFrom } from '../../support/list.js';

const ITEMS = plainItems(250);

const ctx = eachTest(ITEMS);

/** A bystander server that records whatever reaches it. */
async function bystander(): Promise<{ url: string; seen: IncomingHttpHeaders[]; close: () => Promise<void> }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.end('{"items":[],"links":{"self":"x","first":"x"}}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Moves the run's clock through each wait between attempts (told from the HTTP deadline and idle timers of 30 s
 * pending meanwhile) until the run ends; the waits, in the order they fell due.
 */
async function throughWaits(clock: FakeClock, running: Promise<unknown>): Promise<number[]> {
  const retryWait = (ms: number): boolean => ms < 30_000;
  let ended = false;
  const end = (): void => void (ended = true);
  running.then(end, end);
  const waits: number[] = [];
  for (;;) {
    await until(
      () => (ended || clock.pending().some(retryWait) ? true : undefined),
      30_000,
      'a wait or the run to end',
    );
    if (ended) return waits;
    waits.push(await clock.elapseFirst(retryWait));
  }
}

describe('idcli list: transient failures are retried and the output stays exact', () => {
  it('429 with Retry-After, 503, 504, a dropped connection and a body cut short', async () => {
    ctx.emu.inject({ path: '/v1/items', nth: 2, fault: { kind: 'status', status: 429, retryAfter: '1' } });
    ctx.emu.inject({ path: '/v1/items', nth: 3, fault: { kind: 'status', status: 503 } });
    ctx.emu.inject({ path: '/v1/items', nth: 4, fault: { kind: 'drop' } });
    ctx.emu.inject({ path: '/v1/items', nth: 5, fault: { kind: 'drop-mid-body' } });
    ctx.emu.inject({ path: '/v1/items', nth: 6, fault: { kind: 'status', status: 504 } });
    const clock = new FakeClock();
    // One page at a time, so that each fault's wait is alone on the clock. With pages in parallel, two pages'
    // waits are pending at once, and two that end at the same moment are ended by one move of the clock and
    // counted as one. The window under a 429 is tested in test/paginate/page-scheduler.test.ts.
    const running = listCommand(ctx.env, ['/v1/items', '--concurrency', '1'], { clock });
    const waits = await throughWaits(clock, running);
    const r = await running;
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(ITEMS));
    expect(r.requests).toHaveLength(8);
    // Retry-After: 1 was honoured: a wait of at least that long on the run's clock, among one wait per fault.
    expect(waits).toHaveLength(5);
    expect(Math.max(...waits)).toBeGreaterThanOrEqual(1000);
  }, 60_000);

  it("an HTTP-date Retry-After is honoured too, counted from the run's clock", async () => {
    // An hour behind the machine's: a date counted from the machine's clock would be long past, and wait nothing.
    const clock = new FakeClock(Date.now() - 3_600_000);
    // Whole seconds: the date has no finer grain, and its second is counted from the run's clock.
    const at = new Date(Math.ceil(clock.now() / 1000) * 1000 + 2000).toUTCString();
    ctx.emu.inject({ path: '/v1/items', nth: 1, fault: { kind: 'status', status: 503, retryAfter: at } });
    const running = listCommand(ctx.env, ['/v1/items', '--limit', '1'], { clock });
    const waits = await throughWaits(clock, running);
    const r = await running;
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 1)));
    expect(r.requests).toHaveLength(2);
    // Until the date, not the backoff floor of a first retry, nor the clamp of a date taken as far off.
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(1000);
    expect(waits[0]).toBeLessThanOrEqual(3200);
  }, 60_000);

  it('says why it waits when the server asks for a long pause, unless --quiet', async () => {
    ctx.emu.inject({ path: '/v1/items', nth: 1, fault: { kind: 'status', status: 429, retryAfter: '2' } });
    const clock = new FakeClock();
    const running = listCommand(ctx.env, ['/v1/items', '--limit', '1'], { clock });
    expect(Math.min(...(await throughWaits(clock, running)))).toBeGreaterThanOrEqual(2000);
    const r = await running;
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 1)));
    expect(r.stderr).toBe('HTTP 429; retrying in 2 s (retry 1 of 5)\n');
    ctx.emu.inject({ path: '/v1/items', nth: 1, fault: { kind: 'status', status: 503, retryAfter: '2' } });
    const quietClock = new FakeClock();
    const quietRun = listCommand(ctx.env, ['/v1/items', '--limit', '1', '--quiet'], { clock: quietClock });
    expect(await throughWaits(quietClock, quietRun)).toHaveLength(1);
    const quiet = await quietRun;
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
  }, 60_000);

  it('gives up after --max-retries with exit 4', async () => {
    failFrom(ctx.emu, 1, '/v1/items', 503);
    const clock = new FakeClock();
    const running = listCommand(ctx.env, ['/v1/items', '--max-retries', '2'], { clock });
    expect(await throughWaits(clock, running)).toHaveLength(2);
    const r = await running;
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.requests).toHaveLength(3);
    expect(r.stderr).toMatch(/HTTP 503 Service Unavailable after 2 retries/);
  }, 60_000);
});

describe('idcli list: stopping early leaves an exact prefix and a working resume command', () => {
  it('a permanent 500 mid-walk: exit 4, the pages before on stdout, resume yields exactly the rest', async () => {
    failFrom(ctx.emu, 3);
    // One page at a time, so the third request is the third page (the next test does the same in parallel).
    const r = await listCommand(ctx.env, ['/v1/items', '--concurrency', '1']);
    expect(r.code).toBe(4);
    expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 200)));
    expect(r.stderr).toMatch(/idcli: stopped after 200 items; resume with: idcli list '/);
    expect(r.stderr).toMatch(/HTTP 500/);
    const resume = resumeUrl(r.stderr);
    expect(resume).toBe(`${ctx.emu.baseUrl}/v1/items?pageIndex=2&pageSize=100`);

    ctx.emu.clearFaults();
    const rest = await listCommand(ctx.env, [resume as string]);
    expect(rest.code).toBe(0);
    expect(r.stdout + rest.stdout).toBe(ndjson(ITEMS));
  }, 60_000);

  it('the same with --concurrency: pages are written in order up to the failing one', async () => {
    const items = plainItems(1000);
    ctx.emu.setCollection('/v1/wide', { type: 'offset', items });
    // The 6th request is page index 5 (the first page, then 1..4 in flight, then 5).
    failFrom(ctx.emu, 6, '/v1/wide');
    const r = await listCommand(ctx.env, ['/v1/wide', '--page-size', '50', '--concurrency', '4']);
    expect(r.code).toBe(4);
    const resume = resumeUrl(r.stderr) as string;
    const failedIndex = Number(new URL(resume).searchParams.get('pageIndex'));
    expect(r.stdout).toBe(ndjson(items.slice(0, failedIndex * 50)));
    ctx.emu.clearFaults();
    const rest = await listCommand(ctx.env, [resume]);
    expect(r.stdout + rest.stdout).toBe(ndjson(items));
  }, 60_000);

  it('a cursor collection resumes from its cursor link', async () => {
    const items = plainItems(95, 'c');
    ctx.emu.setCollection('/v1/cur', { type: 'cursor', items });
    failFrom(ctx.emu, 4, '/v1/cur', 502);
    const r = await listCommand(ctx.env, ['/v1/cur', '--page-size', '20', '--max-retries', '1']);
    expect(r.code).toBe(4);
    expect(r.stdout).toBe(ndjson(items.slice(0, 60)));
    const resume = resumeUrl(r.stderr) as string;
    expect(resume).toMatch(/cursor=/);
    ctx.emu.clearFaults();
    const rest = await listCommand(ctx.env, [resume]);
    expect(rest.code).toBe(0);
    expect(r.stdout + rest.stdout).toBe(ndjson(items));
  }, 60_000);

  it('a malformed page: exit 5 naming the page, exact prefix, resumable', async () => {
    ctx.emu.inject({ path: '/v1/items', nth: 2, fault: { kind: 'body', body: '{"items":[{"id":"x"},' } });
    const r = await listCommand(ctx.env, ['/v1/items', '--concurrency', '1']);
    expect(r.code).toBe(5);
    expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 100)));
    expect(r.stderr).toContain(`${ctx.emu.baseUrl}/v1/items?pageIndex=1&pageSize=100`);
    expect(r.stderr).toMatch(/invalid JSON/);
    const rest = await listCommand(ctx.env, [resumeUrl(r.stderr) as string]);
    expect(r.stdout + rest.stdout).toBe(ndjson(ITEMS));
  }, 60_000);

  it.each([
    ['an HTML error page', { kind: 'body', contentType: 'text/html', body: '<html><body>Bad gateway</body></html>' }],
    ['items not an array', { kind: 'body', body: '{"items":{},"links":{"self":"a","first":"b"}}' }],
    ['links missing', { kind: 'body', body: '{"items":[]}' }],
    ['a next link that is a number', { kind: 'next', href: 42 }],
  ] as const)(
    '%s: exit 5',
    async (_name, fault) => {
      ctx.emu.inject({ path: '/v1/items', nth: 1, fault });
      const r = await listCommand(ctx.env, ['/v1/items']);
      expect(r.code).toBe(5);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/malformed page/);
    },
    60_000,
  );
});

describe('idcli list: links that must not be followed', () => {
  it('a next link to another origin: exit 5 and that server receives nothing, let alone the token', async () => {
    const other = await bystander();
    try {
      ctx.emu.inject({
        path: '/v1/items',
        nth: 2,
        fault: { kind: 'next', href: `${other.url}/v1/items?pageIndex=2&pageSize=100` },
      });
      const r = await listCommand(ctx.env, ['/v1/items', '--concurrency', '1']);
      expect(r.code).toBe(5);
      expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 200)));
      expect(r.stderr).toMatch(/another origin/);
      expect(r.stderr).toMatch(/idcli: stopped after 200 items\n/);
      expect(other.seen).toHaveLength(0);
    } finally {
      await other.close();
    }
  }, 60_000);

  it('a redirect is not followed: exit 4 and the redirect target receives nothing', async () => {
    const other = await bystander();
    try {
      ctx.emu.inject({
        path: '/v1/items',
        nth: 2,
        fault: { kind: 'status', status: 302, headers: { location: `${other.url}/v1/items?pageIndex=1` } },
      });
      const r = await listCommand(ctx.env, ['/v1/items']);
      expect(r.code).toBe(4);
      expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 100)));
      expect(r.stderr).toMatch(/redirect \(HTTP 302 Found\) to http:\/\/127\.0\.0\.1:\d+, which idcli does not follow/);
      expect(other.seen).toHaveLength(0);
    } finally {
      await other.close();
    }
  }, 60_000);

  it('a loop back to an earlier page: exit 5', async () => {
    ctx.emu.inject({
      path: '/v1/items',
      nth: 2,
      fault: { kind: 'next', href: `${ctx.emu.baseUrl}/v1/items?pageIndex=0&pageSize=100` },
    });
    const r = await listCommand(ctx.env, ['/v1/items', '--concurrency', '1']);
    expect(r.code).toBe(5);
    expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 200)));
    expect(r.stderr).toMatch(/pagination loop/);
    expect(r.requests).toHaveLength(2);
  }, 60_000);

  it('a page linking to itself (relative): exit 5', async () => {
    ctx.emu.inject({ path: '/v1/items', nth: 1, fault: { kind: 'next', href: '/v1/items' } });
    const r = await listCommand(ctx.env, ['/v1/items', '--concurrency', '1']);
    expect(r.code).toBe(5);
    expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 100)));
    expect(r.requests).toHaveLength(1);
  }, 60_000);
});

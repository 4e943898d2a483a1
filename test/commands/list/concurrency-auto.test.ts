/**
 * `--concurrency auto`, the default: pages in flight for offset collections with totalItems, a window that grows
 * while the server keeps up and halves when it throttles, never a page beyond --limit, run in this process against
 * the emulator (the peak memory of the CLI's own process is measured in test/e2e/list-concurrency-auto.test.ts). Every collection
 * response is held for LATENCY_MS, so the pages of a window are in flight at the emulator together, which counts as
 * each request arrives how many are in flight: overlap is read from that count, not from when requests arrived.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { startEmulator } from '../../emulator/index.js';
import { eachEmulator, listCommand, listEnv, ndjson, plainItems } from '../../support/list.js';

const LATENCY_MS = 100;
const ITEMS = plainItems(200);

const ctx = eachEmulator({ latencyMs: LATENCY_MS });
beforeEach(() => {
  ctx.emu.setCollection('/v1/items', { type: 'offset', items: [...ITEMS] });
  ctx.emu.setCollection('/v1/events', { type: 'cursor', items: [...ITEMS] });
});

/** How many collection requests were in flight at the emulator as each request for `path` arrived, in order. */
function inFlight(path: string): number[] {
  return ctx.emu.requests.filter((r) => r.path === path).map((r) => r.inFlight ?? 0);
}

interface Told {
  from: number;
  to: number;
  reason: string;
}

/** The changes of the window told on stderr with --verbose, in order; a hold is a change to the same size. */
function told(stderr: string): Told[] {
  return [...stderr.matchAll(/--concurrency auto: (?:(\d+) → (\d+)|held at (\d+)) pages in flight: (.*)/g)].map(
    ([, from, to, held, reason]) => ({ from: Number(from ?? held), to: Number(to ?? held), reason: reason! }),
  );
}

/**
 * How far the window moves depends on how fast pages come back on this machine; each change it tells must follow the
 * rule all the same (test/paginate/window.test.ts drives the rule itself with a clock of its own): it starts at
 * `start`, each change starts where the one before ended, it grows by one page at a time, comes down by half on a 429
 * or 503 (held below its load a while) and by at most half on a page that slowed, and never again reaches the load at
 * which a page slowed.
 */
function expectFollowsRule(changes: Told[], start: number): void {
  let size = start;
  let limit = 32;
  for (const c of changes) {
    expect(c.from, c.reason).toBe(size);
    const slowed =
      /^a page sent with (\d+) in flight began to come back after \d+ ms, the fastest after \d+ ms; at most (\d+) from now on$/.exec(
        c.reason,
      );
    const refused = /^HTTP (429|503) came with (\d+) in flight; more is tried in \d+ s$/.exec(c.reason);
    if (/pages come back as fast as the first ones$/.test(c.reason)) expect(c.to).toBe(c.from + 1);
    else if (refused) {
      // Held below the load a refused request was sent with, for a while.
      expect(c.to).toBe(c.from);
      expect(c.from + 1).toBeGreaterThanOrEqual(Number(refused[2]));
    } else if (c.reason === 'pages come back no sooner with more in flight') expect(c.to).toBe(c.from);
    else if (c.reason === `a page slowed with ${limit + 1} in flight`) expect(c.to).toBe(c.from);
    else if (/^the server answered HTTP (429|503)/.test(c.reason))
      expect(c.to).toBe(Math.max(1, Math.floor(c.from / 2)));
    else {
      expect(slowed, c.reason).not.toBeNull();
      limit = Math.max(1, Math.min(limit, Number(slowed![1]) - 1));
      expect(Number(slowed![2])).toBe(limit);
      expect(c.to).toBeLessThanOrEqual(c.from);
      expect(c.to).toBeGreaterThanOrEqual(Math.min(limit, Math.ceil(c.from / 2)));
    }
    expect(c.to, c.reason).toBeLessThanOrEqual(limit);
    size = c.to;
  }
}

describe('idcli list --concurrency auto (the default)', () => {
  it('starts with 4 pages in flight, holds no more than the window it tells of, and writes what -c 1 and -c 4 write', async () => {
    const items = plainItems(400);
    ctx.emu.setCollection('/v1/many', { type: 'offset', items });
    const r = await listCommand(ctx.env, ['/v1/many', '--page-size', '10', '--verbose']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(items));
    const seen = inFlight('/v1/many');
    expect(seen).toHaveLength(40);
    // After the first page, pages 2–5 go out together: never more than 4 of them at once.
    expect(Math.max(...seen.slice(0, 5))).toBe(4);
    // Then the window moves by its rule, and never holds more pages than it said, nor more than the ceiling of 32.
    const changes = told(r.stderr);
    expectFollowsRule(changes, 4);
    expect(Math.max(...seen)).toBeLessThanOrEqual(Math.max(4, ...changes.map((c) => c.to)));
    expect(Math.max(...seen)).toBeLessThanOrEqual(32);

    for (const window of ['1', '4']) {
      const fixed = await listCommand(ctx.env, ['/v1/many', '--page-size', '100', '--concurrency', window]);
      expect(fixed.stdoutBytes.equals(r.stdoutBytes), `-c ${window}`).toBe(true);
    }
  }, 60_000);

  for (const status of [429, 503]) {
    it(`halves the window on a ${status}, and says so with --verbose`, async () => {
      ctx.emu.inject({ path: '/v1/items', nth: 3, fault: { kind: 'status', status, retryAfter: '0' } });
      const r = await listCommand(ctx.env, ['/v1/items', '--page-size', '10', '--verbose']);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(ndjson(ITEMS));
      // Halved once, from the window at the time: 4, or 5 when the two pages before the refused one were taken first.
      const changes = told(r.stderr);
      expectFollowsRule(changes, 4);
      const cuts = changes.filter((c) => c.reason.startsWith(`the server answered HTTP ${status}`));
      expect(cuts).toHaveLength(1);
      expect(inFlight('/v1/items')).toHaveLength(21);
    }, 60_000);
  }

  it('against a server that rate-limits at 6 in flight: at most a few 429s, each halving the window, the output exact', async () => {
    const limited = await startEmulator({ latencyMs: LATENCY_MS, maxInFlight: 6, rateLimitRetryAfter: '1' });
    const limitedEnv = await listEnv(limited, limited.mintTokens().access_token);
    try {
      const items = plainItems(600);
      limited.setCollection('/v1/many', { type: 'offset', items });
      const r = await listCommand(limitedEnv, ['/v1/many', '--page-size', '10', '--verbose']);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(ndjson(items));
      const logged = limited.requests.filter((q) => q.path === '/v1/many');
      const throttled = logged.filter((q) => q.status === 429);
      // A 429 comes only once the window has grown past the limit, which takes pages that come back as fast as the
      // first ones here; window.test.ts shows the rule with a clock: a handful of 429s for 60 pages, not one per page.
      const changes = told(r.stderr);
      expectFollowsRule(changes, 4);
      expect(throttled.length).toBeLessThanOrEqual(6);
      if (throttled.length > 0) expect(Math.max(...changes.map((c) => c.to))).toBeGreaterThan(6);
      const cuts = changes.filter((c) => c.reason.startsWith('the server answered HTTP 429'));
      expect(cuts.length).toBeLessThanOrEqual(throttled.length);
      // The Retry-After of 1 s, plus the first retry's jitter (under 0.1 s).
      if (cuts.length > 0) expect(cuts[0]!.reason).toMatch(/; no new request for 1\.[01] s$/);
      // Every page was answered once in the end: 60 pages, plus one retry per 429.
      expect(logged.filter((q) => q.status === 200)).toHaveLength(60);
      expect(logged).toHaveLength(60 + throttled.length);
    } finally {
      await limited.close();
      await limitedEnv.cleanup();
    }
  }, 60_000);

  it('against a server that slows with load: the window comes down and stays below the load that slowed', async () => {
    // 20 ms a page with up to 2 in flight, 100·n² ms above: the window's first pages (4 at once) meet the slowdown
    // whatever the machine's speed, since the third of them takes 900 ms, far beyond any first page's time.
    const slowing = await startEmulator({ latencyMs: 20, loadLatency: { above: 2, msPerSquare: 100 } });
    const slowingEnv = await listEnv(slowing, slowing.mintTokens().access_token);
    try {
      const items = plainItems(1000);
      slowing.setCollection('/v1/many', { type: 'offset', items });
      const r = await listCommand(slowingEnv, ['/v1/many', '--page-size', '10', '--verbose']);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(ndjson(items));
      const cut =
        /--concurrency auto: (\d+) → (\d+) pages in flight: a page sent with (\d+) in flight began to come back after \d+ ms, the fastest after \d+ ms; at most (\d+) from now on/.exec(
          r.stderr,
        );
      expect(cut, r.stderr).not.toBeNull();
      const [, from, to, load, limit] = cut!.map(Number);
      expect(to).toBeLessThan(from!);
      expect(limit).toBe(load! - 1);
      // Only pages sent before the cut met the slowdown (the first window, and those sent as its fast pages were
      // taken): not most of the 100 pages, as a window held at 4 would.
      const slowed = slowing.requests.filter((q) => q.path === '/v1/many' && (q.inFlight ?? 0) > 2);
      expect(slowed.length).toBeLessThanOrEqual(8);
    } finally {
      await slowing.close();
      await slowingEnv.cleanup();
    }
  }, 60_000);

  it('on a link that carries one page at a time, stops growing once more pages in flight would only queue', async () => {
    // A page takes the link about 2 ms and nothing else delays an answer: a handful of pages in flight keep the link
    // busy. Judged page by page (twice the fastest page's time, plus slack for jitter) the window would grow on to
    // where each page waits for a score of others.
    const fast = await startEmulator({ link: { bandwidthMbps: 12 } });
    const fastEnv = await listEnv(fast, fast.mintTokens().access_token);
    try {
      const items = plainItems(30_000);
      fast.setCollection('/v1/many', { type: 'offset', items });
      const r = await listCommand(fastEnv, ['/v1/many', '--page-size', '100', '--verbose'], {
        extraEnv: { IDCLI_HTTP_COMPRESSION: '0' },
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(ndjson(items));
      const seen = fast.requests.filter((q) => q.path === '/v1/many').map((q) => q.inFlight ?? 0);
      expect(seen).toHaveLength(300);
      // Held well short of the ceiling (a busy machine, whose CPU then is the limit, may hold it a little higher), by
      // the pace, or on a busy machine by pages that slowed first.
      expect(r.stderr).toMatch(
        /--concurrency auto: (held at \d+ pages in flight: pages come back no sooner with more in flight|\d+ → \d+ pages in flight: a page sent with \d+ in flight began to come back)/,
      );
      expect(Math.max(...seen)).toBeLessThanOrEqual(16);
    } finally {
      await fast.close();
      await fastEnv.cleanup();
    }
  }, 60_000);

  it('--concurrency 3 stays 3: no growth, no cut, whatever the server answers', async () => {
    const items = plainItems(400);
    ctx.emu.setCollection('/v1/many', { type: 'offset', items });
    ctx.emu.inject({ path: '/v1/many', nth: 4, fault: { kind: 'status', status: 429, retryAfter: '0' } });
    const r = await listCommand(ctx.env, ['/v1/many', '--page-size', '10', '--concurrency', '3', '--verbose']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(items));
    expect(r.stderr).not.toMatch(/pages in flight/);
    expect(Math.max(...inFlight('/v1/many'))).toBe(3);
  }, 60_000);

  it('--limit never asks for a page beyond the limit', async () => {
    const r = await listCommand(ctx.env, ['/v1/items', '--page-size', '20', '--limit', '50']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 50)));
    expect(r.requests.map((u) => new URL(u, ctx.emu.baseUrl).searchParams.get('pageIndex'))).toEqual([null, '1', '2']);
  }, 60_000);

  it('walks a cursor collection one page after another, without a note on stderr', async () => {
    const r = await listCommand(ctx.env, ['/v1/events', '--page-size', '50']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(ITEMS));
    expect(r.stderr).toBe('');
    // Each request arrived with none other in flight: none overlapped.
    const seen = inFlight('/v1/events');
    expect(seen.length).toBeGreaterThanOrEqual(ITEMS.length / 50);
    expect(seen.filter((n) => n !== 1)).toEqual([]);
  }, 60_000);
});

/**
 * `--concurrency auto`, the default: pages in flight for offset collections with totalItems, one at a time after the
 * server throttles, never a page beyond --limit, through the BUILT CLI against the emulator. Every collection
 * response is held for LATENCY_MS, so requests that overlap arrive together and requests that wait for one another
 * arrive at least that far apart, whatever the machine's speed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../emulator/index.js';
import { list, type ListEnv, listEnv, ndjson, plainItems } from './helpers.js';

const LATENCY_MS = 300;
const ITEMS = plainItems(200);

let emu: Emulator;
let env: ListEnv & { cleanup: () => Promise<void> };

beforeEach(async () => {
  emu = await startEmulator({ latencyMs: LATENCY_MS });
  env = await listEnv(emu, emu.mintTokens().access_token);
  emu.setCollection('/v1/items', { type: 'offset', items: [...ITEMS] });
  emu.setCollection('/v1/events', { type: 'cursor', items: [...ITEMS] });
});
afterEach(async () => {
  await emu.close();
  await env.cleanup();
});

/** Arrival times (ms) of the requests for `path`, in order. */
function arrivals(path: string): number[] {
  return emu.requests.filter((r) => r.path === path).map((r) => r.wallTime);
}

/** The indexes of the requests that arrived less than half the latency after the one before: they overlapped. */
function overlapping(times: number[]): number[] {
  return times.flatMap((t, i) => (i > 0 && t - times[i - 1]! < LATENCY_MS / 2 ? [i] : []));
}

describe('idcli list --concurrency auto (the default)', () => {
  it('keeps up to 4 pages in flight on an offset collection, and writes what a sequential walk writes', async () => {
    const r = await list(env, ['/v1/items', '--page-size', '20']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(ITEMS));
    expect(r.stderr).toBe('');
    const times = arrivals('/v1/items');
    expect(times).toHaveLength(10);
    // After the first page, pages 2–5 go out together: three of them arrive on the heels of the one before.
    expect(overlapping(times).filter((i) => i <= 4)).toEqual([2, 3, 4]);
    // Never more than 4 at once: any five requests in a row span at least one latency.
    for (let i = 4; i < times.length; i++) expect(times[i]! - times[i - 4]!).toBeGreaterThanOrEqual(LATENCY_MS - 50);

    const sequential = await list(env, ['/v1/items', '--page-size', '20', '--concurrency', '1']);
    expect(sequential.stdoutBytes.equals(r.stdoutBytes)).toBe(true);
  }, 60_000);

  for (const status of [429, 503]) {
    it(`drops to one page in flight for the rest of the walk after the first ${status}, and says so with --verbose`, async () => {
      emu.inject({ path: '/v1/items', nth: 3, fault: { kind: 'status', status, retryAfter: '0' } });
      const r = await list(env, ['/v1/items', '--page-size', '10', '--verbose']);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(ndjson(ITEMS));
      expect(r.stderr).toMatch(
        new RegExp(`--concurrency auto: the server answered HTTP ${status}; one page at a time`),
      );
      const times = arrivals('/v1/items');
      expect(times).toHaveLength(21);
      // Before the throttling answer pages overlapped; from the seventh request on (the window of four and the
      // retry have drained by then) each one waits for the answer before it.
      expect(overlapping(times).filter((i) => i <= 4).length).toBeGreaterThan(0);
      expect(overlapping(times).filter((i) => i >= 7)).toEqual([]);
    }, 60_000);
  }

  it('--limit never asks for a page beyond the limit', async () => {
    const r = await list(env, ['/v1/items', '--page-size', '20', '--limit', '50']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 50)));
    expect(r.requests.map((u) => new URL(u, emu.baseUrl).searchParams.get('pageIndex'))).toEqual([null, '1', '2']);
  }, 60_000);

  it('walks a cursor collection one page after another, without a note on stderr', async () => {
    const r = await list(env, ['/v1/events', '--page-size', '50']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(ITEMS));
    expect(r.stderr).toBe('');
    expect(overlapping(arrivals('/v1/events'))).toEqual([]);
  }, 60_000);
});

/**
 * The same answer at every window and page size: exact output, a link to another origin, a loop, a malformed page
 * and a page with another pageIndex end the walk as they do at `-c 1`, with the same stdout and exit, whether the
 * window is 1, `auto` (growing), `auto` against a server that rate-limits (shrinking) or 32, and whatever page size
 * is asked. In this process (runCommand) against the emulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../emulator/index.js';
import { listCommand, type ListEnv, listEnv, ndjson, plainItems } from '../../support/list.js';

const WINDOWS = [
  { window: '1', limited: false },
  { window: 'auto', limited: false },
  { window: 'auto', limited: true },
  { window: '32', limited: false },
];
/** Each page size with a collection of its own: a hundred pages at 7 keep every window full many times over. */
const SIZES = [
  { size: '7', items: 7, total: 700 },
  { size: '100', items: 100, total: 2500 },
  { size: 'auto', items: 1000, total: 2500 },
];

/**
 * An emulator as it serves, and one that answers 429 past 3 requests in flight (the window then shrinks), holding
 * each page 20 ms so that requests overlap there even on loopback.
 */
const emus: Record<'plain' | 'limited', { emu: Emulator; env: ListEnv & { cleanup: () => Promise<void> } }> =
  {} as never;

beforeAll(async () => {
  for (const [name, opts] of [
    ['plain', {}],
    ['limited', { maxInFlight: 3, rateLimitRetryAfter: '0', latencyMs: 20 }],
  ] as const) {
    const emu = await startEmulator(opts);
    const env = await listEnv(emu, emu.mintTokens().access_token);
    emus[name] = { emu, env };
  }
});
afterAll(async () => {
  for (const { emu, env } of Object.values(emus)) {
    await emu.close();
    await env.cleanup();
  }
});

describe.each(SIZES)('--page-size $size', ({ size, items: perPage, total }) => {
  const collection = plainItems(total);
  beforeAll(() => {
    for (const { emu } of Object.values(emus))
      emu.setCollection('/v1/items', { type: 'offset', items: [...collection] });
  });
  /** The link to page `index` as the emulator spells it. */
  const link = (emu: Emulator, index: number) => `${emu.baseUrl}/v1/items?pageIndex=${index}&pageSize=${perPage}`;
  const reference: Record<string, { stderr: string }> = {};

  describe.each(WINDOWS)('--concurrency $window (rate-limited: $limited)', ({ window, limited }) => {
    const at = () => emus[limited ? 'limited' : 'plain'];
    const run = () =>
      listCommand(at().env, ['/v1/items', '--page-size', size, '--concurrency', window], {
        extraEnv: { IDCLI_PAGE_SIZE: undefined },
      });
    /** A fault on the second page (pageIndex 1) only, whatever order the window's requests arrive in. */
    const onSecondPage = (fault: Parameters<Emulator['inject']>[0]['fault']) => {
      at().emu.clearFaults();
      at().emu.inject({ path: '/v1/items', params: { pageIndex: '1' }, fault });
    };
    /** stderr is that of -c 1 for the same rule and page size (the first window of the table runs first). */
    const sameAsSequential = (rule: string, text: string) => {
      // Named as the emulator in use is reached: the rate-limited one listens on another port.
      const stderr = text.replaceAll(at().emu.baseUrl, '<api>');
      if (window === '1') reference[rule] = { stderr };
      else expect(stderr).toBe(reference[rule]?.stderr);
    };

    it('writes every item once, in order, byte for byte', async () => {
      at().emu.clearFaults();
      const before = at().emu.requests.length;
      const r = await run();
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(ndjson(collection));
      // Against the rate-limiting server the window did meet 429s, given pages enough to fill it (not 3 of 1000).
      const throttled = at()
        .emu.requests.slice(before)
        .filter((q) => q.status === 429);
      if (limited && window !== '1' && size !== 'auto') expect(throttled.length).toBeGreaterThan(0);
    }, 60_000);

    it('a link to another origin: exit 5 after that page, and the other origin gets nothing', async () => {
      onSecondPage({ kind: 'next', href: 'http://other.invalid/v1/items?pageIndex=2' });
      const r = await run();
      expect(r.code).toBe(5);
      expect(r.stdout).toBe(ndjson(collection.slice(0, 2 * perPage)));
      expect(r.stderr).toMatch(/links\.next points to another origin \(http:\/\/other\.invalid\)/);
      sameAsSequential('origin', r.stderr);
    }, 60_000);

    it('a loop back to the first page: exit 5 after the looping page, nothing written twice', async () => {
      onSecondPage({ kind: 'next', href: link(at().emu, 0) });
      const r = await run();
      expect(r.code).toBe(5);
      expect(r.stdout).toBe(ndjson(collection.slice(0, 2 * perPage)));
      expect(r.stderr).toMatch(/pagination loop/);
      sameAsSequential('loop', r.stderr);
    }, 60_000);

    it('a malformed page: exit 5, the pages before it on stdout', async () => {
      onSecondPage({ kind: 'body', body: '{"items":5,"links":{}}' });
      const r = await run();
      expect(r.code).toBe(5);
      expect(r.stdout).toBe(ndjson(collection.slice(0, perPage)));
      expect(r.stderr).toMatch(/malformed page .*"items" is not an array/);
    }, 60_000);

    // The page the links lead to is the page written, whatever pageIndex it says it is: as at -c 1.
    it('a page with another pageIndex: what -c 1 writes, with its exit code', async () => {
      const self = link(at().emu, 7);
      const body = `{"pageIndex":7,"totalItems":${total},"items":[{"id":"x"}],"links":{"self":"${self}","first":"${self}"}}`;
      onSecondPage({ kind: 'body', body });
      const r = await run();
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(ndjson([...collection.slice(0, perPage), '{"id":"x"}']));
      sameAsSequential('pageIndex', r.stderr);
    }, 60_000);
  });
});

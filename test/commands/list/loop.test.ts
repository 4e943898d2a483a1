/**
 * A pagination loop at every window: whatever the number of pages in flight and however the server spells its
 * links, the walk stops at the page whose links.next leads back to a page already written, with exactly the pages up
 * to and including it on stdout (nothing twice), exit 5, and the message of a walk with `-c 1`. Through the BUILT
 * CLI against the emulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../emulator/index.js';
import { listCommand, type ListEnv, listEnv, ndjson, plainItems } from '../../support/list.js';

const PAGE = 100;
const ITEMS = plainItems(2000);
const LAST = ITEMS.length / PAGE - 1;
const SPELLINGS = [
  { spelling: 'pageIndex-first', path: '/v1/items' },
  { spelling: 'pageSize-first', path: '/v1/spelled' },
] as const;
const WINDOWS = ['1', '2', 'auto', '16'];

let emu: Emulator;
let env: ListEnv & { cleanup: () => Promise<void> };

beforeAll(async () => {
  emu = await startEmulator();
  env = await listEnv(emu, emu.mintTokens().access_token);
  for (const { spelling, path } of SPELLINGS) {
    emu.setCollection(path, { type: 'offset', items: [...ITEMS], querySpelling: spelling });
  }
});
afterAll(async () => {
  await emu.close();
  await env.cleanup();
});

/** The query of page `index`, spelled with pageIndex first or pageSize first. */
function query(index: number, sizeFirst: boolean): string {
  const own = [`pageIndex=${index}`, `pageSize=${PAGE}`];
  return (sizeFirst ? own.reverse() : own).join('&');
}

/** The link to page `index` as the collection at `path` spells it. */
function link(path: string, index: number): string {
  return `${emu.baseUrl}${path}?${query(index, path === '/v1/spelled')}`;
}

/**
 * The walk of `path` at `window` with page `at`'s links.next leading back to page `to`. The first request spells
 * its query the other way round from the server's links, so the pages fetched by pageIndex (built from it) are
 * spelled otherwise than the links that lead to them.
 */
async function loopRun(path: string, window: string, at: number, to: number) {
  emu.clearFaults();
  emu.inject({ path, params: { pageIndex: String(at) }, fault: { kind: 'next', href: link(path, to) } });
  return listCommand(env, [`${path}?${query(0, path !== '/v1/spelled')}`, '--concurrency', window]);
}

describe.each(SPELLINGS)('a pagination loop, links spelled $spelling', ({ path }) => {
  const cases = [
    { name: 'the last page back to page 1', at: LAST, to: 1 },
    { name: 'the last page back to page 0', at: LAST, to: 0 },
    { name: 'page 5 back to page 3', at: 5, to: 3 },
    { name: 'page 4 back to itself', at: 4, to: 4 },
  ];
  describe.each(cases)('$name', ({ at, to }) => {
    let reference: Awaited<ReturnType<typeof loopRun>>;
    beforeAll(async () => {
      reference = await loopRun(path, '1', at, to);
    }, 60_000);

    it('-c 1 writes every page up to the looping one once, then exit 5 naming both pages', () => {
      expect(reference.code).toBe(5);
      expect(reference.stdout).toBe(ndjson(ITEMS.slice(0, (at + 1) * PAGE)));
      expect(reference.stderr).toContain(
        `page ${link(path, at)}: links.next leads back to ${link(path, to)}, a page already fetched (pagination loop)`,
      );
    });

    it.each(WINDOWS.slice(1))(
      '--concurrency %s: the same output, exit and message as -c 1',
      async (window) => {
        const r = await loopRun(path, window, at, to);
        expect(r.code).toBe(5);
        expect(r.stdoutBytes.equals(reference.stdoutBytes)).toBe(true);
        expect(r.stderr).toBe(reference.stderr);
      },
      60_000,
    );
  });
});

describe('the emulator loop fault at every window', () => {
  it.each(WINDOWS)(
    '--concurrency %s: page 1 linking back to the first request is exit 5 after 200 items',
    async (w) => {
      emu.clearFaults();
      emu.inject({
        path: '/v1/items',
        params: { pageIndex: '1' },
        fault: { kind: 'next', href: `${emu.baseUrl}/v1/items?pageIndex=0&pageSize=${PAGE}` },
      });
      const r = await listCommand(env, ['/v1/items', '--page-size', String(PAGE), '--concurrency', w]);
      expect(r.code).toBe(5);
      expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 2 * PAGE)));
      expect(r.stderr).toMatch(/pagination loop/);
    },
    60_000,
  );
});

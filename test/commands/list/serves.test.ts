/**
 * A server that serves more or fewer items a page than asked, numbering its pages by what it serves: the window
 * asks only for the pages the links lead to, so every window writes what `-c 1` writes, with the same exit code,
 * whatever page size is asked and whichever page size the server's links spell. In this process (runCommand)
 * against the emulator's collections that ignore pageSize.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../emulator/index.js';
import { listCommand, type ListEnv, listEnv, plainItems } from '../../support/list.js';

const WINDOWS = ['auto', '4', '16'];
/**
 * Each page size with a collection of its own: pages enough at 7 to keep every window full many times over, more
 * than one page at 1000. A server that serves fewer and spells the size it served shrinks its pages to one item
 * within a few pages, so there the collection's length is the walk's number of pages, whatever size is asked.
 */
const ITEMS: Record<string, number> = { '7': 700, '100': 1000, '1000': 1200 };
const SIZES = Object.keys(ITEMS);
const SERVERS = [
  { name: 'more', times: 2, links: 'asked' },
  { name: 'fewer', times: 0.5, links: 'asked' },
  { name: 'more-linked', times: 2, links: 'served' },
  { name: 'fewer-linked', times: 0.5, links: 'served' },
] as const;

let emu: Emulator;
let env: ListEnv & { cleanup: () => Promise<void> };

beforeAll(async () => {
  emu = await startEmulator();
  env = await listEnv(emu, emu.mintTokens().access_token);
  for (const s of SERVERS) {
    for (const [size, count] of Object.entries(ITEMS)) {
      emu.setCollection(`/v1/${s.name}-${size}`, { type: 'offset', items: plainItems(count), serves: s });
    }
  }
});
afterAll(async () => {
  await emu.close();
  await env.cleanup();
});

describe.each(SERVERS)('a server serving $times× the items asked, links spelling the size $links', ({ name }) => {
  it.each(SIZES)(
    '--page-size %s: every window writes what -c 1 writes, with its exit code',
    async (size) => {
      const run = (window: string) =>
        listCommand(env, [`/v1/${name}-${size}`, '--page-size', size, '--concurrency', window], {
          extraEnv: { IDCLI_PAGE_SIZE: undefined },
        });
      const sequential = await run('1');
      expect(sequential.stdout.length).toBeGreaterThan(0);
      for (const window of WINDOWS) {
        const r = await run(window);
        expect({ window, code: r.code }).toEqual({ window, code: sequential.code });
        expect(r.stdoutBytes.equals(sequential.stdoutBytes), `--concurrency ${window}`).toBe(true);
      }
    },
    120_000,
  );
});

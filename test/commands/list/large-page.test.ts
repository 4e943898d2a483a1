/**
 * A page of any size never ends a walk early (docs/cli.md, "Concurrency"): one page of tens of MB among small ones,
 * in this process (runCommand) against the emulator, gives every item at every window, and `-o` keeps its state
 * until then.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eachEmulator, listCommand, ndjson, plainItems } from '../../support/list.js';

const MB = 1024 * 1024;
const PAGE = 50;

/** 1000 small items with one of `mb` MB at `at`: with pages of 50, the page holding it is about that large. */
function withLargeItem(mb: number, at: number): string[] {
  const items = plainItems(1000);
  items[at] = `{"id":"large","pad":"${'x'.repeat(mb * MB)}"}`;
  return items;
}

const ctx = eachEmulator();

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

describe('idcli list: a large page among small ones', () => {
  const items = withLargeItem(40, 420);
  // Compared byte for byte rather than hashed: a comparison of tens of MB costs far less than a digest of them.
  const expected = Buffer.from(ndjson(items));

  it.each([['1'], ['4'], ['auto']])(
    'a page of 40 MB mid-walk at -c %s: every item, exit 0',
    async (window) => {
      ctx.emu.setCollection('/v1/items', { type: 'offset', items });
      const r = await listCommand(ctx.env, ['/v1/items', '--page-size', String(PAGE), '--concurrency', window]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdoutBytes.length).toBe(expected.length);
      expect(r.stdoutBytes.equals(expected), 'stdout is not the collection').toBe(true);
    },
    120_000,
  );

  it('with -o FILE: FILE holds every item, and only then is its state removed', async () => {
    ctx.emu.setCollection('/v1/items', { type: 'offset', items });
    const out = join(ctx.env.configDir, 'items.ndjson');
    const r = await listCommand(ctx.env, ['/v1/items', '--page-size', String(PAGE), '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    expect((await readFile(out)).equals(expected), 'FILE is not the collection').toBe(true);
    expect(await exists(`${out}.idcli-state`)).toBe(false);
  }, 120_000);

  it.each([
    [16, 420],
    [21, 420],
    [31, 420],
    [33, 420],
    [33, 10],
  ])(
    'a page of %d MB (the item at %d) at auto and -c 4: every item',
    async (mb, at) => {
      const these = withLargeItem(mb, at);
      const want = Buffer.from(ndjson(these));
      ctx.emu.setCollection('/v1/items', { type: 'offset', items: these });
      for (const window of ['4', 'auto']) {
        const r = await listCommand(ctx.env, ['/v1/items', '--page-size', String(PAGE), '--concurrency', window]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdoutBytes.length, `-c ${window}`).toBe(want.length);
        expect(r.stdoutBytes.equals(want), `-c ${window}: stdout is not the collection`).toBe(true);
      }
    },
    120_000,
  );
});

// Needs a process: these measure the peak resident memory of the CLI's own process (GNU time) as it writes to a pipe.
/**
 * `--concurrency auto` under pages of many MB: the byte cap holds pages back and the memory stays bounded, through the
 * BUILT CLI against the emulator (collection responses held for LATENCY_MS, so that requests overlap there).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type Emulator, growingItems, startEmulator } from '../emulator/index.js';
import { BIN } from '../support/cli.js';
import { sha256Ndjson } from '../support/hash.js';
import { cliEnv, eachEmulator, type ListEnv, listEnv, shell } from '../support/list.js';

const LATENCY_MS = 300;
/**
 * The SHA-256 of the CLI's stdout, taken at the other end of its pipe by Node, whose OpenSSL uses the CPU's SHA
 * instructions where coreutils' sha256sum does not: hundreds of MB pass through here.
 */
const SHA256_OF_STDIN = `"${process.execPath}" -e 'const h = require("node:crypto").createHash("sha256"); process.stdin.on("data", (b) => h.update(b)).on("end", () => console.log(h.digest("hex")))'`;

const ctx = eachEmulator({ latencyMs: LATENCY_MS });

/** How many collection requests were in flight at the emulator as each request for `path` arrived, in order. */
function inFlight(path: string): number[] {
  return ctx.emu.requests.filter((r) => r.path === path).map((r) => r.inFlight ?? 0);
}

describe('idcli list --concurrency auto (the default): memory', () => {
  it('caps the bytes waiting in the window: pages of 19 MB never have more than 3 in flight, and memory stays bounded', async () => {
    const pad = 'x'.repeat(20_000);
    const items = Array.from({ length: 6000 }, (_, i) => `{"id":${i},"pad":"${pad}"}`);
    ctx.emu.setCollection('/v1/large', { type: 'offset', items });
    const script = `/usr/bin/time -f 'rss=%M' node "${BIN}" list /v1/large --page-size 1000 --verbose | ${SHA256_OF_STDIN}`;
    const out = await shell(script, cliEnv(ctx.env));
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toBe(sha256Ndjson(items));
    expect(out.stderr).toMatch(
      /--concurrency auto: 4 → 3 pages in flight: pages of 19\.1 MB, at most 64\.0 MB of them held besides the next to write/,
    );
    // The cap itself, counted where the requests arrive: without it all five pages after the first would be in
    // flight at once.
    expect(Math.max(...inFlight('/v1/large'))).toBeLessThanOrEqual(3);
    // The memory it bounds: 64 MB of pages held, the page being written in its forms (its bytes, the parsed items,
    // the lines written out: about three times its 19 MB), and Node itself, plus what the garbage collector has not
    // yet taken back. All six pages held at once, in those forms, take more than twice that.
    const rssMb = Number(/rss=(\d+)/.exec(out.stderr)![1]) / 1024;
    expect(rssMb).toBeLessThan(250);
  }, 60_000);

  // 300 pages of 1 KB let the window grow to 32 while it knows only small pages; then each page is 4 times the one
  // before, up to 12 pages of 30 MB. Judged from the pages seen so far, they would all be on their way at once.
  const perPage = 10;
  const items = growingItems(perPage, 30 * 1024 * 1024);
  // Hashed once, and served by one emulator (which packs the items once), for both windows: hundreds of MB.
  let expected: string | undefined;
  let fast: { emu: Emulator; env: ListEnv & { cleanup: () => Promise<void> } } | undefined;
  afterAll(async () => {
    await fast?.emu.close();
    await fast?.env.cleanup();
  });

  it.each(['32', 'auto'])(
    'counts the bytes arriving at -c %s: pages growing from 1 KB to 30 MB after 300 small ones',
    async (window) => {
      expected ??= sha256Ndjson(items);
      if (fast === undefined) {
        const emu = await startEmulator();
        fast = { emu, env: await listEnv(emu, emu.mintTokens().access_token) };
        fast.emu.setCollection('/v1/growing', { type: 'offset', items });
      }
      const script = `/usr/bin/time -f 'rss=%M' node "${BIN}" list /v1/growing --page-size ${perPage} --concurrency ${window} --verbose | ${SHA256_OF_STDIN}`;
      const out = await shell(script, cliEnv(fast.env, { IDCLI_HTTP_COMPRESSION: '0' }));
      expect(out.code).toBe(0);
      expect(out.stdout.trim()).toBe(expected);
      // At 32 the cap is what holds the pages back (under auto, pages that slowed may have brought the window down first).
      // Which page size it first tells of depends on when the pages arrive; the window it names must fit the cap.
      if (window === '32') {
        const told =
          /32 → (\d+) pages in flight: pages of (\d+\.\d) MB, at most 64\.0 MB of them held besides the next to write/.exec(
            out.stderr,
          );
        expect(told, out.stderr).not.toBeNull();
        const [to, mb] = [Number(told![1]), Number(told![2])];
        expect(to).toBeLessThan(32);
        // The size is shown to a tenth of a MB: `to` pages fit in 64 MB and one more would not.
        expect(to * (mb - 0.05)).toBeLessThanOrEqual(64);
        expect((to + 1) * (mb + 0.05)).toBeGreaterThan(64);
      }
      // 64 MB, one page of 30 MB, Node itself (about 80 MB), and room for the garbage of the socket's chunks that a busy
      // machine's collector has not freed yet (Node 26's frees later: up to two pages more); judged from the pages
      // seen so far, twelve pages of 30 MB would be held, 360 MB of pages alone.
      const rssMb = Number(/rss=(\d+)/.exec(out.stderr)![1]) / 1024;
      expect(rssMb).toBeLessThan(64 + 30 + 80 + 80 + 2 * 30);
    },
    120_000,
  );
});

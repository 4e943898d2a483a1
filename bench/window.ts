/**
 * The window section of `npm run bench`: the two budgets of `--concurrency` that a loopback walk of even pages never
 * meets (issue 35, Budgets).
 *
 *   growing pages   300 pages of 1 KB (the window grows to 32 on them), then each page 4 times the one before, up to
 *                   12 pages of 30 MB: peak RSS at each window, against 64 MB + one page + the baseline (the peak
 *                   RSS of a walk of 1 KB pages, measured in the same run)
 *   large pages     300 pages of 1 KB, then 8 pages of 40 MB, at auto: peak RSS against 64 MB + two pages + the
 *                   baseline (a page larger than half the cap comes alone, held back until the one before is written)
 *   slowing server  20 ms a page, 20·n² ms above 6 in flight: the time of `auto` against `-c 4` and `-c 1`
 *
 * The emulator runs in a child process of its own. Prints a table; asserts nothing.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BIN, benchFlags, cliEnv, createHarness, median, type Sample, startEmu } from './harness.js';

const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);
const PAGE_MB = 30;
const LARGE_MB = 40;
const LARGE_PAGES = 8;
const CAP_MB = 64;
const BASELINE_MB = 80;
const SLOWING_ITEMS = 30_000;

const rssMb = (samples: Sample[]) => Math.max(...samples.map((s) => s.rssKb ?? 0)) / 1024;
const seconds = (samples: Sample[]) => median(samples.map((s) => s.ms)) / 1000;

export async function benchWindow(): Promise<void> {
  const flags = benchFlags();
  const runs = Number(flags.runs ?? (flags.quick ? 1 : 3));
  const h = await createHarness();
  const lines: string[] = [];
  try {
    const idcli = (path: string, ...args: string[]) => [process.execPath, BIN, 'list', path, ...args];

    log('growing pages: starting the emulator');
    const growing = await startEmu({ items: 3000, growing: 10 });
    try {
      const env = cliEnv(h.work, growing.baseUrl);
      const measure = async (cmd: string[], extra: NodeJS.ProcessEnv = {}) => {
        const samples: Sample[] = [];
        for (let i = 0; i < runs; i++) samples.push(await h.measure(cmd, { ...env, ...extra }));
        return samples;
      };
      const baseline = rssMb(await measure(idcli('/v1/bench', '--page-size', '10')));
      const budget = CAP_MB + PAGE_MB + BASELINE_MB;
      lines.push(
        `window: pages growing from 1 KB to ${PAGE_MB} MB after 300 of 1 KB, --page-size 10; ${runs} runs each`,
        `  baseline (peak RSS of a walk of 1 KB pages): ${baseline.toFixed(1)} MB; budget ${CAP_MB} MB + one page + ~${BASELINE_MB} MB = ${budget} MB`,
      );
      for (const compression of ['0', '1']) {
        for (const window of ['auto', '1', '4', '32']) {
          const samples = await measure(idcli('/v1/growing', '--page-size', '10', '--concurrency', window), {
            IDCLI_HTTP_COMPRESSION: compression,
          });
          const rss = rssMb(samples);
          const verdict = rss <= budget ? 'ok' : 'OVER';
          const over = rss - baseline;
          lines.push(
            `  -c ${window.padEnd(5)} compression ${compression === '1' ? 'on ' : 'off'}  ${seconds(samples).toFixed(2)} s  peak RSS ${rss.toFixed(1)} MB (${over.toFixed(1)} MB over the baseline, ${(over / (CAP_MB + PAGE_MB)).toFixed(2)}x cap + page)  ${verdict}`,
          );
        }
      }
    } finally {
      await growing.stop();
    }

    log('large pages: starting the emulator');
    const large = await startEmu({ items: 3000, large: LARGE_PAGES });
    try {
      const env = cliEnv(h.work, large.baseUrl);
      const out = join(h.work, 'large.ndjson');
      const measure = async (cmd: string[]) => {
        const samples: Sample[] = [];
        for (let i = 0; i < runs; i++) samples.push(await h.measure(cmd, env, out));
        return samples;
      };
      const baseline = rssMb(await measure(idcli('/v1/bench', '--page-size', '10')));
      const budget = CAP_MB + 2 * LARGE_MB + baseline;
      const one = rssMb(await measure(idcli('/v1/large', '--page-size', '1', '--concurrency', '1')));
      const samples = await measure(idcli('/v1/large', '--page-size', '1', '--concurrency', 'auto'));
      const rss = rssMb(samples);
      // Each item is {"pad":"…"} and a newline: a walk that ended early would be cheap, not good.
      const whole = 300 * (1000 + 11) + LARGE_PAGES * (LARGE_MB * 1024 * 1024 + 11);
      const written = (await stat(out)).size;
      lines.push(
        `window: ${LARGE_PAGES} pages of ${LARGE_MB} MB after 300 of 1 KB, --page-size 1 at auto; ${runs} runs`,
        `  baseline ${baseline.toFixed(1)} MB; budget ${CAP_MB} MB + two pages + the baseline = ${budget.toFixed(1)} MB`,
        `  -c auto  ${seconds(samples).toFixed(2)} s  peak RSS ${rss.toFixed(1)} MB (${(rss - baseline).toFixed(1)} MB over the baseline)  ${rss <= budget ? 'ok' : 'OVER'}`,
        `  written ${written} of ${whole} bytes  ${written === whole ? 'ok' : 'INCOMPLETE'}`,
        `  -c 1 for comparison: peak RSS ${one.toFixed(1)} MB (${(one - baseline).toFixed(1)} MB over the baseline)`,
      );
    } finally {
      await large.stop();
    }

    log('slowing server: starting the emulator');
    const slowing = await startEmu({ items: SLOWING_ITEMS, latencyMs: 20, loadLatency: { above: 6, msPerSquare: 20 } });
    try {
      const env = cliEnv(h.work, slowing.baseUrl);
      const time = async (window: string) => {
        const samples: Sample[] = [];
        for (let i = 0; i < runs; i++) {
          samples.push(await h.measure(idcli('/v1/bench', '--page-size', '100', '--concurrency', window), env));
        }
        return seconds(samples);
      };
      const [auto, four, one] = [await time('auto'), await time('4'), await time('1')];
      const ok = (pass: boolean) => (pass ? 'ok' : 'OVER');
      lines.push(
        `window: a server that slows with load (20 ms, 20·n² ms above 6 in flight), ${SLOWING_ITEMS.toLocaleString('en')} items, --page-size 100; median of ${runs}`,
        `  -c 1 ${one.toFixed(2)} s   -c 4 ${four.toFixed(2)} s   auto ${auto.toFixed(2)} s`,
        `  auto / -c 4 = ${(auto / four).toFixed(2)}x (budget <= 1.5x ${ok(auto <= 1.5 * four)})   auto / -c 1 = ${(auto / one).toFixed(2)}x (budget < 1x ${ok(auto < one)})`,
      );
    } finally {
      await slowing.stop();
    }
  } finally {
    await h.close();
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await benchWindow();

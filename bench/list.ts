/**
 * `npm run bench`: whole-process figures for `idcli list`, each as a ratio against a floor measured in the
 * same run on the same machine (issues "list" and "own less", Budgets). Prints a table; asserts nothing.
 *
 *   floor     a plain Node script that downloads the same pages through a node:http keep-alive Agent, as idcli's
 *             direct transport does, and discards them
 *   idcli     the built CLI with its defaults (compressed transfer, --concurrency auto), stdout to /dev/null;
 *             beside it, idcli as the floor fetches (identity, one page at a time)
 *   curl+jq   what users write by hand: curl | jq -c '.items[]' and jq -r '.links.next.href' in a loop
 *
 * The emulator runs in a child process of its own. Wall time is measured around each process; peak RSS
 * comes from /usr/bin/time (%M), or from a preloaded exit hook reading process.resourceUsage() without it.
 * Flags: --quick (3 runs, no 1M/2M items, no curl+jq), --runs <n>.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  BIN,
  benchFlags,
  cliEnv,
  createHarness,
  type EmulatorChild,
  median,
  type Sample,
  startEmu,
  writeCurlJqScript,
} from './harness.js';

interface Row {
  name: string;
  samples: Sample[];
  floor?: Row;
  budget?: string;
  check?: (ratio: number) => boolean;
  note?: string;
}

const flags = benchFlags();
const RUNS = Number(flags.runs ?? (flags.quick ? 3 : 5));
const BIG_RUNS = flags.quick ? 0 : 3;

const medMs = (r: Row) => median(r.samples.map((s) => s.ms));
const peakRss = (r: Row) => Math.max(...r.samples.map((s) => s.rssKb ?? 0));

export async function benchList(): Promise<void> {
  const { work, measure, bundle, close } = await createHarness();
  /** Measures the commands interleaved (a, b, a, b, ...) so drift on a shared machine hits both alike. */
  const interleaved = async (runs: number, cmds: Array<{ row: Row; cmd: string[]; env: NodeJS.ProcessEnv }>) => {
    for (let i = 0; i < runs; i++) {
      for (const c of cmds) c.row.samples.push(await measure(c.cmd, c.env));
    }
  };
  const floorJs = await bundle('floor.ts');
  const idcli = (...args: string[]) => [process.execPath, BIN, 'list', ...args];
  const floor = (baseUrl: string, total: number, pageSize: number) => [
    process.execPath,
    floorJs,
    `${baseUrl}/v1/bench`,
    String(total),
    String(pageSize),
  ];
  const rows: Row[] = [];
  const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

  // ---- 100k items ---------------------------------------------------------------------------------
  let emu: EmulatorChild = await startEmu({ items: 100_000 });
  try {
    const env = cliEnv(work, emu.baseUrl);
    const identity = { ...env, IDCLI_HTTP_COMPRESSION: '0' };
    // Sanity: the CLI really writes every item.
    const check = join(work, 'check.ndjson');
    await measure(idcli('/v1/bench', '--page-size', '1000'), env, check);
    const lines = (await readFile(check, 'utf8')).split('\n').length - 1;
    if (lines !== 100_000) throw new Error(`idcli wrote ${lines} lines, expected 100000`);
    const item = (await readFile(check, 'utf8')).split('\n')[0]!;
    log(`100k items of ${Buffer.byteLength(item)} bytes each; ${RUNS} runs per figure`);

    const startFloor: Row = { name: 'node start-up (node -e 0)', samples: [] };
    const startCli: Row = {
      name: 'idcli list, empty collection',
      samples: [],
      floor: startFloor,
      note: 'start-up cost',
    };
    await interleaved(RUNS, [
      { row: startFloor, cmd: [process.execPath, '-e', '0'], env },
      { row: startCli, cmd: idcli('/v1/empty'), env },
    ]);

    for (const pageSize of [1000, 100]) {
      const f: Row = { name: `floor      100k items, pageSize ${pageSize}`, samples: [] };
      const c: Row = {
        name: `idcli      100k items, pageSize ${pageSize}`,
        samples: [],
        floor: f,
        budget: '<= 1.5x',
        check: (r) => r <= 1.5,
      };
      // The floor's own way of fetching: uncompressed, one page at a time. On loopback the difference between this
      // row and the one above is what decoding and pages in flight cost where bandwidth and round trips are free.
      const plain: Row = {
        name: `idcli -c 1, identity, 100k, pageSize ${pageSize}`,
        samples: [],
        floor: f,
        note: 'as the floor fetches',
      };
      log(`100k items, pageSize ${pageSize}`);
      await interleaved(RUNS, [
        { row: f, cmd: floor(emu.baseUrl, 100_000, pageSize), env },
        { row: c, cmd: idcli('/v1/bench', '--page-size', String(pageSize)), env },
        { row: plain, cmd: idcli('/v1/bench', '--page-size', String(pageSize), '--concurrency', '1'), env: identity },
      ]);
      rows.push(f, c, plain);
    }
    const c8: Row = {
      name: 'idcli -c 8 100k items, pageSize 1000',
      samples: [],
      floor: rows[0],
      note: 'memory reference',
    };
    await interleaved(Math.min(RUNS, 3), [
      { row: c8, cmd: idcli('/v1/bench', '--page-size', '1000', '--concurrency', '8'), env },
    ]);
    rows.push(c8);
    rows.push(startFloor, startCli);

    if (!flags.quick) {
      const script = join(work, 'curl-jq.sh');
      await writeCurlJqScript(script);
      for (const pageSize of [100, 1000]) {
        log(`curl + jq loop, 100k items, pageSize ${pageSize} (one run; slow by nature)`);
        const out = join(work, 'curl.ndjson');
        const sample = await measure(['bash', script, `${emu.baseUrl}/v1/bench?pageSize=${pageSize}`], env, out);
        const got = (await readFile(out, 'utf8')).split('\n').length - 1;
        if (got !== 100_000) throw new Error(`curl + jq wrote ${got} lines`);
        const cli = rows.find((r) => r.name === `idcli      100k items, pageSize ${pageSize}`)!;
        const need = 30;
        rows.push({
          name: `curl+jq    100k items, pageSize ${pageSize}`,
          samples: [sample],
          floor: cli,
          budget: `idcli >= ${need}x faster`,
          check: (r) => r >= need,
        });
      }
    }
  } finally {
    await emu.stop();
  }

  // ---- 1M and 2M items: memory must not grow with the collection ------------------------------------
  const big: Array<[string, number]> =
    BIG_RUNS > 0
      ? [
          ['1M', 1_000_000],
          ['2M', 2_000_000],
        ]
      : [];
  for (const [label, count] of big) {
    log(`starting the emulator with ${count.toLocaleString('en')} items`);
    emu = await startEmu({ items: count });
    try {
      const env = cliEnv(work, emu.baseUrl);
      const f: Row = { name: `floor      ${label} items, pageSize 1000`, samples: [] };
      const c: Row = {
        name: `idcli      ${label} items, pageSize 1000`,
        samples: [],
        floor: f,
        note: 'time for reference',
      };
      const c8: Row = {
        name: `idcli -c 8 ${label} items, pageSize 1000`,
        samples: [],
        floor: f,
        note: 'time for reference',
      };
      log(`${label} items, ${BIG_RUNS} runs`);
      await interleaved(BIG_RUNS, [
        { row: f, cmd: floor(emu.baseUrl, count, 1000), env },
        { row: c, cmd: idcli('/v1/bench', '--page-size', '1000'), env },
        { row: c8, cmd: idcli('/v1/bench', '--page-size', '1000', '--concurrency', '8'), env },
      ]);
      rows.push(f, c, c8);
    } finally {
      await emu.stop();
    }
  }

  // ---- 20 ms latency per page ---------------------------------------------------------------------
  log('20 ms latency per page, 20k items, pageSize 100');
  emu = await startEmu({ items: 20_000, latencyMs: 20 });
  try {
    const env = cliEnv(work, emu.baseUrl);
    const seq: Row = { name: 'idcli -c 1 20k items, 20 ms/page, sequential', samples: [] };
    const par: Row = { name: 'idcli -c 8 20k items, 20 ms/page', samples: [], floor: seq };
    const auto: Row = { name: 'idcli      20k items, 20 ms/page (auto)', samples: [], floor: seq };
    await interleaved(Math.min(RUNS, 3), [
      { row: seq, cmd: idcli('/v1/bench', '--page-size', '100', '--concurrency', '1'), env },
      { row: par, cmd: idcli('/v1/bench', '--page-size', '100', '--concurrency', '8'), env },
      { row: auto, cmd: idcli('/v1/bench', '--page-size', '100'), env },
    ]);
    rows.push(
      seq,
      { ...par, budget: '>= 5x faster', check: (r) => 1 / r >= 5 },
      { ...auto, note: 'time for reference' },
    );
  } finally {
    await emu.stop();
  }

  // ---- report -----------------------------------------------------------------------------------------
  const out = table(rows);
  // Memory must not grow with the collection: peak RSS under 100 MB at 1M and 2M items, 2M within 10 MB of 1M.
  const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;
  for (const mode of ['idcli     ', 'idcli -c 8']) {
    const one = rows.find((r) => r.name.startsWith(`${mode} 1M items`));
    const two = rows.find((r) => r.name.startsWith(`${mode} 2M items`));
    if (!one || !two) continue;
    const a = peakRss(one);
    const b = peakRss(two);
    const ok = a < 100 * 1024 && b < 100 * 1024 && b <= a + 10 * 1024;
    out.push(
      `memory: ${mode.trim()} peak ${mb(a)} at 1M, ${mb(b)} at 2M (${b >= a ? '+' : ''}${mb(b - a)}); budget < 100 MB each and 2M <= 1M + 10 MB: ${ok ? 'ok' : 'MISSED'}`,
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
  await close();
}

/** The rows as a table: median time, the ratio against each row's floor, and the budget it is held to. */
function table(rows: Row[]): string[] {
  const out: string[] = [];
  const pad = (s: string, n: number) => s.padEnd(n);
  out.push(
    `${pad('scenario', 46)}${pad('runs', 6)}${pad('median', 10)}${pad('vs', 46)}${pad('ratio', 9)}${pad('budget', 30)}peak RSS`,
  );
  for (const r of rows) {
    const m = medMs(r);
    let vs = '';
    let ratio = '';
    let budget = r.budget ?? r.note ?? '';
    if (r.floor) {
      const base = medMs(r.floor);
      const x = m / base;
      vs = r.floor.name.replace(/\s+/g, ' ');
      ratio =
        r.check && r.budget?.includes('faster')
          ? `${(r.budget.startsWith('idcli') ? x : 1 / x).toFixed(1)}x`
          : `${x.toFixed(2)}x`;
      if (r.check) budget += r.check(x) ? '  ok' : '  MISSED';
    }
    const rss = peakRss(r);
    out.push(
      `${pad(r.name, 46)}${pad(String(r.samples.length), 6)}${pad(`${(m / 1000).toFixed(3)} s`, 10)}${pad(vs, 46)}${pad(ratio, 9)}${pad(budget, 30)}${rss ? `${(rss / 1024).toFixed(1)} MB` : ''}`,
    );
  }
  return out;
}

/**
 * `-o FILE` against `> FILE` for 1M items on loopback: the state file replaced after every page is the whole
 * difference, and must stay within 10 % (issue "list -o"). Both files are on the same file system (the scratch
 * directory), and the runs are interleaved.
 */
export async function benchDump(): Promise<void> {
  const { work, measure, close } = await createHarness();
  const runs = Number(flags.runs ?? (flags.quick ? 1 : 3));
  const count = flags.quick ? 100_000 : 1_000_000;
  const label = flags.quick ? '100k' : '1M';
  const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);
  log(`-o FILE vs > FILE: starting the emulator with ${count.toLocaleString('en')} items`);
  const emu = await startEmu({ items: count });
  const rows: Row[] = [];
  try {
    const env = cliEnv(work, emu.baseUrl);
    const redirected = join(work, 'redirected.ndjson');
    const dumped = join(work, 'dumped.ndjson');
    const idcli = (...args: string[]) => [process.execPath, BIN, 'list', '/v1/bench', '--page-size', '1000', ...args];
    const plain: Row = { name: `idcli > FILE  ${label} items, pageSize 1000`, samples: [] };
    const dump: Row = {
      name: `idcli -o FILE ${label} items, pageSize 1000`,
      samples: [],
      floor: plain,
      budget: '<= 1.1x',
      check: (r) => r <= 1.1,
    };
    log(`${label} items, ${runs} runs each`);
    for (let i = 0; i < runs; i++) {
      plain.samples.push(await measure(idcli(), env, redirected));
      // The shell truncates `> FILE` before idcli starts, outside the measured time; a FILE that -o overwrites would
      // be truncated inside it. Both start from an empty file.
      await rm(dumped, { force: true });
      dump.samples.push(await measure(idcli('-o', dumped), env));
    }
    const a = await readFile(redirected);
    const b = await readFile(dumped);
    if (!a.equals(b)) throw new Error('-o FILE and > FILE wrote different bytes');
    rows.push(plain, dump);
  } finally {
    await emu.stop();
  }
  process.stdout.write(`${table(rows).join('\n')}\n`);
  await close();
}

if (import.meta.url === `file://${process.argv[1]}`) await benchList();

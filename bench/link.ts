/**
 * The link section of `npm run bench`: `idcli list` where users run it, across the internet or a VPN, rather than
 * on loopback where bandwidth and round trips are free. The emulator (a child process) paces every response
 * through one byte budget and pays a latency before each; /v1/records holds realistic user records, so
 * compressed sizes are those of real data. Clients, interleaved, every output written to a file:
 *
 *   idcli list                 the built CLI with its defaults
 *   idcli list -c 1            strictly one page at a time
 *   fetch loop (peer)          Node's global fetch following links.next, JSON.parse per page (bench/fetch-loop.ts)
 *   curl --compressed + jq     the shell loop users write by hand
 *
 * Prints the time and the wire bytes of each (as the emulator counted them), and idcli's times as ratios against
 * the fetch loop measured in the same run, with budgets as ok/OVER. Asserts nothing. Then the same over HTTPS on a
 * link that charges every round trip (bench/link-tls.ts).
 * Alone: `npx tsx bench/link.ts [--records <n>] [--runs <n>]` (after npm run build).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  BIN,
  benchFlags,
  cliEnv,
  createHarness,
  type EmulatorChild,
  type Harness,
  median,
  type Sample,
  startEmu,
  writeCurlJqScript,
} from './harness.js';
import { benchLinkTls } from './link-tls.js';

const LINKS = [
  { bandwidthMbps: 100, latencyMs: 20 },
  { bandwidthMbps: 20, latencyMs: 50 },
] as const;
/** Every client asks for the same pages, so they differ only in how they fetch them. */
const PAGE_SIZE = 1000;

interface Client {
  name: string;
  cmd: string[];
  /** Its median time over the fetch loop's must not exceed this. */
  budget?: number;
}

interface Row extends Client {
  samples: Sample[];
  wire: number[];
}

type Link = (typeof LINKS)[number];

const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** The median of the runs' wire bytes, and their range when the runs did not all carry the same. */
function wireText(wire: number[]): string {
  const lo = Math.min(...wire);
  const hi = Math.max(...wire);
  return hi - lo > hi / 100 ? `${mb(median(wire))} (${mb(lo)}-${(hi / 1e6).toFixed(1)})` : mb(median(wire));
}

/** One run of every client, checked: each writes every record, byte for byte what the others write. */
async function check(h: Harness, clients: Client[], env: NodeJS.ProcessEnv, records: number): Promise<number> {
  let reference: { name: string; digest: string } | undefined;
  let bytes = 0;
  for (const c of clients) {
    const file = join(h.work, 'check.ndjson');
    await h.measure(c.cmd, env, file);
    const text = await readFile(file);
    const lines = text.toString('utf8').split('\n').length - 1;
    if (lines !== records) throw new Error(`${c.name} wrote ${lines} lines, expected ${records}`);
    const digest = createHash('sha256').update(text).digest('hex');
    reference ??= { name: c.name, digest };
    if (digest !== reference.digest) throw new Error(`${c.name} wrote other bytes than ${reference.name}`);
    bytes = text.length;
  }
  return bytes;
}

function report(link: Link, rows: Row[], peer: Row): string[] {
  const pad = (s: string, n: number) => s.padEnd(n);
  const out = [
    `${pad('scenario', 30)}${pad('runs', 6)}${pad('median', 10)}${pad('wire/run', 20)}${pad('link time', 11)}${pad('vs', 20)}${pad('ratio', 9)}${pad('budget', 16)}peak RSS`,
  ];
  const peerMs = median(peer.samples.map((s) => s.ms));
  for (const r of rows) {
    const ms = median(r.samples.map((s) => s.ms));
    const wire = median(r.wire);
    // What the link alone needs for those bytes: the time a client would take with nothing else to do.
    const linkMs = (wire * 8) / (link.bandwidthMbps * 1000);
    const ratio = ms / peerMs;
    const vs = r === peer ? '' : peer.name;
    const budget = r.budget === undefined ? '' : `<= ${r.budget}x${ratio <= r.budget ? '  ok' : '  OVER'}`;
    const rss = Math.max(...r.samples.map((s) => s.rssKb ?? 0));
    out.push(
      `${pad(r.name, 30)}${pad(String(r.samples.length), 6)}${pad(seconds(ms), 10)}${pad(wireText(r.wire), 20)}${pad(seconds(linkMs), 11)}${pad(vs, 20)}${pad(r === peer ? '' : `${ratio.toFixed(2)}x`, 9)}${pad(budget, 16)}${rss ? `${(rss / 1024).toFixed(1)} MB` : ''}`,
    );
  }
  return out;
}

async function benchOneLink(
  h: Harness,
  link: Link,
  records: number,
  runs: number,
  scripts: Scripts,
): Promise<string[]> {
  log(`link of ${link.bandwidthMbps} Mbit/s, ${link.latencyMs} ms before each response: starting the emulator`);
  const emu = await startEmu({ items: 0, records, link });
  try {
    const env = cliEnv(h.work, emu.baseUrl);
    const first = `${emu.baseUrl}/v1/records?pageSize=${PAGE_SIZE}`;
    const idcli = (...args: string[]) => [
      process.execPath,
      BIN,
      'list',
      '/v1/records',
      '--page-size',
      `${PAGE_SIZE}`,
      ...args,
    ];
    const clients: Client[] = [
      { name: 'idcli list', cmd: idcli(), budget: 0.5 },
      { name: 'idcli list --concurrency 1', cmd: idcli('--concurrency', '1'), budget: 0.85 },
      { name: 'fetch loop (peer)', cmd: [process.execPath, scripts.fetchLoop, first] },
      { name: 'curl --compressed + jq', cmd: ['bash', scripts.curlJq, first] },
    ];
    // The check run also has the emulator encode every page once, before anything is timed.
    const json = await check(h, clients, env, records);
    log(`${records.toLocaleString('en')} records, ${mb(json)} of NDJSON; ${runs} interleaved runs`);
    const rows: Row[] = clients.map((c) => ({ ...c, samples: [], wire: [] }));
    const out = join(h.work, 'link.ndjson');
    for (let i = 0; i < runs; i++) {
      for (const r of rows) {
        const before = await emu.wireBytes();
        r.samples.push(await h.measure(r.cmd, env, out));
        r.wire.push((await emu.wireBytes()) - before);
      }
    }
    const title = `link: ${link.bandwidthMbps} Mbit/s, ${link.latencyMs} ms before each response; ${records.toLocaleString('en')} records (${mb(json)} of NDJSON), pageSize ${PAGE_SIZE}`;
    return [title, ...report(link, rows, rows[2]!)];
  } finally {
    await emu.stop();
  }
}

/** A runner on another continent: where the page size and the window matter most. */
const FAR = { bandwidthMbps: 100, latencyMs: 100 } as const;
const FAR_RECORDS = 20_000;
/** The server of the rate-limited runs answers 429 past this many requests in flight. */
const RATE_LIMIT = 8;

interface FarClient {
  name: string;
  cmd: string[];
  /** Budget over the fetch loop of the same collection, and over the link floor. */
  peerBudget?: number;
  floorBudget?: number;
  /** The rate-limited server: 429s at most pages ÷ 10, and no failed walk. */
  limited?: boolean;
}

interface FarRow extends FarClient {
  samples: Sample[];
  wire: number[];
  throttled: number[];
  pages: number[];
  failed: number;
}

/** Runs every client `runs` times, interleaved, against the emulator; a failed run is counted, not fatal. */
async function farRows(h: Harness, emu: EmulatorChild, clients: FarClient[], runs: number): Promise<FarRow[]> {
  const env = cliEnv(h.work, emu.baseUrl);
  const rows: FarRow[] = clients.map((c) => ({ ...c, samples: [], wire: [], throttled: [], pages: [], failed: 0 }));
  const out = join(h.work, 'far.ndjson');
  for (let i = 0; i < runs; i++) {
    for (const r of rows) {
      const before = await emu.stats();
      try {
        r.samples.push(await h.measure(r.cmd, env, out));
        const lines = (await readFile(out, 'utf8')).split('\n').length - 1;
        if (lines !== FAR_RECORDS) throw new Error(`${r.name} wrote ${lines} lines, expected ${FAR_RECORDS}`);
      } catch (err) {
        r.failed++;
        log(`${r.name}: ${(err as Error).message.slice(0, 300)}`);
      }
      const after = await emu.stats();
      r.wire.push(after.wireBytes - before.wireBytes);
      r.throttled.push(after.throttled - before.throttled);
      r.pages.push(after.pages - before.pages);
    }
  }
  return rows;
}

/**
 * The link floor: the compressed bytes at the link's bandwidth, plus two round trips (the first page's, which must
 * come before any other is known, and the last one's).
 */
function floorMs(wire: number, link: typeof FAR): number {
  return (wire * 8) / (link.bandwidthMbps * 1000) + 2 * link.latencyMs;
}

function farReport(rows: FarRow[], peerMs: Map<string, number>): string[] {
  const pad = (s: string, n: number) => s.padEnd(n);
  const out = [
    `${pad('scenario', 46)}${pad('runs', 6)}${pad('median', 10)}${pad('wire/run', 12)}${pad('floor', 9)}${pad('vs fetch loop', 22)}${pad('vs floor', 18)}${pad('429s/pages', 22)}peak RSS`,
  ];
  for (const r of rows) {
    const ok = r.samples.length > 0;
    const ms = ok ? median(r.samples.map((s) => s.ms)) : Number.NaN;
    const wire = median(r.wire);
    const floor = floorMs(wire, FAR);
    const isPeer = r.name.startsWith('fetch loop');
    const peer = peerMs.get(collectionOf(r.cmd));
    const vsPeer = isPeer || peer === undefined ? '' : ratio(ms / peer, r.peerBudget);
    const vsFloor = isPeer ? '' : ratio(ms / floor, r.floorBudget);
    const throttled = Math.max(...r.throttled);
    const pages = Math.min(...r.pages);
    const limit = r.limited
      ? `${throttled}/${pages}${throttled <= pages / 10 && r.failed === 0 ? '  ok' : '  OVER'}${r.failed ? ` (${r.failed} failed)` : ''}`
      : r.failed
        ? `(${r.failed} failed)`
        : '';
    const rss = Math.max(0, ...r.samples.map((s) => s.rssKb ?? 0));
    out.push(
      `${pad(r.name, 46)}${pad(String(r.samples.length), 6)}${pad(ok ? seconds(ms) : 'failed', 10)}${pad(mb(wire), 12)}${pad(seconds(floor), 9)}${pad(vsPeer, 22)}${pad(vsFloor, 18)}${pad(limit, 22)}${rss ? `${(rss / 1024).toFixed(1)} MB` : ''}`,
    );
  }
  return out;
}

/** `0.08x <= 0.1x  ok`, or just the ratio when there is no budget. */
function ratio(x: number, budget: number | undefined): string {
  if (!Number.isFinite(x)) return '';
  return budget === undefined ? `${x.toFixed(2)}x` : `${x.toFixed(2)}x <= ${budget}x${x <= budget ? '  ok' : '  OVER'}`;
}

/** The collection path a client's command walks. */
function collectionOf(cmd: string[]): string {
  const target = cmd.find((a) => a.includes('/v1/')) ?? '';
  return new URL(target, 'http://x').pathname;
}

/**
 * 100 Mbit/s with 100 ms before each response, 20,000 records, as a new user runs it: idcli with no flags against
 * the offset- and the cursor-based collection, each beside the fetch loop that asks for nothing (the service's 100
 * items a page), then against a server that answers 429 past 8 requests in flight.
 */
async function benchFarLink(h: Harness, runs: number, scripts: Scripts): Promise<string[]> {
  const idcli = (...args: string[]) => [process.execPath, BIN, 'list', ...args];
  const fetchLoop = (baseUrl: string, path: string) => [process.execPath, scripts.fetchLoop, `${baseUrl}${path}`];
  const title = `link: ${FAR.bandwidthMbps} Mbit/s, ${FAR.latencyMs} ms before each response; ${FAR_RECORDS.toLocaleString('en')} records, idcli with its defaults (no --page-size)`;
  log(title);
  const lines = [title];
  const peerMs = new Map<string, number>();
  let emu = await startEmu({ items: 0, records: FAR_RECORDS, link: FAR });
  try {
    const rows = await farRows(
      h,
      emu,
      [
        { name: 'idcli list /v1/records', cmd: idcli('/v1/records'), peerBudget: 0.1, floorBudget: 3 },
        { name: 'idcli list /v1/records -c 1', cmd: idcli('/v1/records', '--concurrency', '1') },
        { name: 'fetch loop (peer), offset', cmd: fetchLoop(emu.baseUrl, '/v1/records') },
        { name: 'idcli list /v1/records-cursor', cmd: idcli('/v1/records-cursor'), peerBudget: 0.2 },
        { name: 'fetch loop (peer), cursor', cmd: fetchLoop(emu.baseUrl, '/v1/records-cursor') },
      ],
      runs,
    );
    for (const r of rows) {
      if (r.name.startsWith('fetch loop')) peerMs.set(collectionOf(r.cmd), median(r.samples.map((s) => s.ms)));
    }
    lines.push(...farReport(rows, peerMs));
  } finally {
    await emu.stop();
  }
  lines.push(`rate-limited: the server answers 429 (Retry-After: 1) past ${RATE_LIMIT} requests in flight; same link`);
  emu = await startEmu({ items: 0, records: FAR_RECORDS, link: FAR, maxInFlight: RATE_LIMIT });
  try {
    const rows = await farRows(
      h,
      emu,
      [
        { name: 'idcli list /v1/records', cmd: idcli('/v1/records'), limited: true, peerBudget: 0.1 },
        {
          name: 'idcli list /v1/records --page-size 100',
          cmd: idcli('/v1/records', '--page-size', '100'),
          limited: true,
        },
      ],
      runs,
    );
    lines.push(...farReport(rows, peerMs));
  } finally {
    await emu.stop();
  }
  return lines;
}

interface Scripts {
  fetchLoop: string;
  curlJq: string;
}

export async function benchLink(): Promise<void> {
  const flags = benchFlags();
  const records = Number(flags.records ?? 100_000);
  const runs = Number(flags.runs ?? (flags.quick ? 1 : 3));
  if (!(Number.isSafeInteger(records) && records > 0)) throw new Error('--records must be a positive integer');
  const h = await createHarness();
  try {
    const scripts: Scripts = { fetchLoop: await h.bundle('fetch-loop.ts'), curlJq: join(h.work, 'curl-jq.sh') };
    await writeCurlJqScript(scripts.curlJq, '--compressed');
    const out: string[] = [];
    if (!flags.far && !flags.tls) {
      for (const link of LINKS) out.push(...(await benchOneLink(h, link, records, runs, scripts)), '');
    }
    if (!flags.tls) out.push(...(await benchFarLink(h, runs, scripts)), '');
    if (!flags.far) out.push(...(await benchLinkTls(h, runs, scripts.fetchLoop)));
    process.stdout.write(out.join('\n'));
  } finally {
    await h.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchLink();

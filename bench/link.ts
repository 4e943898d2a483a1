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
 * the fetch loop measured in the same run, with budgets as ok/OVER. Asserts nothing.
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
  type Harness,
  median,
  type Sample,
  startEmu,
  writeCurlJqScript,
} from './harness.js';

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
    for (const link of LINKS) out.push(...(await benchOneLink(h, link, records, runs, scripts)), '');
    process.stdout.write(out.join('\n'));
  } finally {
    await h.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchLink();

/**
 * The link section over HTTPS, on a link that charges every round trip (test/emulator/relay.ts): connecting, the
 * TLS handshake and each request pay the latency as on a real network, and the server's bytes share one budget.
 * The emulator serves HTTPS (HTTP/2 or HTTP/1.1, as ALPN settles) with a CA made for the run, trusted through
 * NODE_EXTRA_CA_CERTS (curl: CURL_CA_BUNDLE); the h2 column counts the connections that chose HTTP/2.
 * 20,000 realistic records at 100 Mbit/s with a round trip of 20 ms and of 100 ms:
 *
 *   idcli list                      the built CLI with its defaults
 *   idcli list -c 1                 one page at a time
 *   fetch loop (peer)               Node's fetch following links.next, the service's page size (bench/fetch-loop.ts)
 *   curl --compressed + jq          one curl per page of 1000, HTTP/1.1, and HTTP/2 where the curl here has it
 *
 * and at 100 ms through Debian's tinyproxy (a CONNECT tunnel per connection), when it is installed. Prints each
 * one's time, wire bytes, the connections and TLS handshakes it made (as the server counted them), and ratios
 * against the fetch loop and the link floor, with the budgets as ok/OVER. Asserts nothing.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { buildTrustStore } from '../src/http/trust.js';
import {
  BIN,
  cliEnv,
  type EmulatorChild,
  type EmulatorStats,
  type Harness,
  median,
  type Sample,
  startEmu,
  writeCurlJqScript,
} from './harness.js';

const RECORDS = 20_000;
const LINKS = [
  { bandwidthMbps: 100, latencyMs: 20, roundTrip: true, peerBudget: 0.5 },
  { bandwidthMbps: 100, latencyMs: 100, roundTrip: true, peerBudget: 0.1, floorBudget: 3 },
] as const;
type Link = (typeof LINKS)[number];

interface Client {
  name: string;
  cmd: string[];
  peerBudget?: number;
  floorBudget?: number;
  /** Environment on top of the run's (a proxy). */
  env?: NodeJS.ProcessEnv;
}

interface Row extends Client {
  samples: Sample[];
  deltas: EmulatorStats[];
  failed: number;
}

const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const pad = (s: string, n: number) => s.padEnd(n);

/**
 * The link floor: the bytes at the link's bandwidth, one round trip each for the TCP and the TLS handshake, the
 * first page's (which must come before any other is known) and the last one's.
 */
function floorMs(wire: number, link: Link): number {
  return (wire * 8) / (link.bandwidthMbps * 1000) + 4 * link.latencyMs;
}

function ratio(x: number, budget: number | undefined): string {
  if (!Number.isFinite(x)) return '';
  return budget === undefined ? `${x.toFixed(2)}x` : `${x.toFixed(2)}x <= ${budget}x${x <= budget ? '  ok' : '  OVER'}`;
}

function diff(a: EmulatorStats, b: EmulatorStats): EmulatorStats {
  return {
    wireBytes: b.wireBytes - a.wireBytes,
    throttled: b.throttled - a.throttled,
    pages: b.pages - a.pages,
    tcp: b.tcp - a.tcp,
    tls: b.tls - a.tls,
    resumed: b.resumed - a.resumed,
    http2: b.http2 - a.http2,
  };
}

async function runRows(h: Harness, emu: EmulatorChild, clients: Client[], runs: number): Promise<Row[]> {
  const env = cliEnv(h.work, emu.baseUrl, emu.caFile);
  const rows: Row[] = clients.map((c) => ({ ...c, samples: [], deltas: [], failed: 0 }));
  const out = join(h.work, 'tls.ndjson');
  for (let i = 0; i < runs; i++) {
    for (const r of rows) {
      const before = await emu.stats();
      try {
        r.samples.push(await h.measure(r.cmd, { ...env, ...r.env }, out));
        const lines = (await readFile(out, 'utf8')).split('\n').length - 1;
        if (lines !== RECORDS) throw new Error(`${r.name} wrote ${lines} lines, expected ${RECORDS}`);
      } catch (err) {
        r.failed++;
        log(`${r.name}: ${(err as Error).message.slice(0, 300)}`);
      }
      r.deltas.push(diff(before, await emu.stats()));
    }
  }
  return rows;
}

function report(rows: Row[], link: Link): string[] {
  const out = [
    `${pad('scenario', 50)}${pad('runs', 6)}${pad('median', 10)}${pad('wire/run', 10)}${pad('floor', 9)}${pad('conns', 7)}${pad('TLS (resumed)', 15)}${pad('h2', 4)}${pad('vs fetch loop', 22)}vs floor`,
  ];
  const peer = rows.find((r) => r.name.startsWith('fetch loop'));
  const peerMs = peer && peer.samples.length > 0 ? median(peer.samples.map((s) => s.ms)) : Number.NaN;
  for (const r of rows) {
    const ok = r.samples.length > 0;
    const ms = ok ? median(r.samples.map((s) => s.ms)) : Number.NaN;
    const wire = median(r.deltas.map((d) => d.wireBytes));
    const floor = floorMs(wire, link);
    const tcp = median(r.deltas.map((d) => d.tcp));
    const tls = `${median(r.deltas.map((d) => d.tls))} (${median(r.deltas.map((d) => d.resumed))})`;
    const h2 = median(r.deltas.map((d) => d.http2));
    const vsPeer = r === peer ? '' : ratio(ms / peerMs, r.peerBudget);
    out.push(
      `${pad(r.name, 50)}${pad(String(r.samples.length), 6)}${pad(ok ? seconds(ms) : 'failed', 10)}${pad(`${(wire / 1e6).toFixed(1)} MB`, 10)}${pad(seconds(floor), 9)}${pad(String(tcp), 7)}${pad(tls, 15)}${pad(String(h2), 4)}${pad(vsPeer, 22)}${ratio(ms / floor, r.floorBudget)}${r.failed ? `  (${r.failed} failed)` : ''}`,
    );
  }
  return out;
}

/** Whether the curl here speaks HTTP/2 (its feature list names HTTP2). */
function curlHasHttp2(): boolean {
  try {
    return /\bHTTP2\b/.test(execFileSync('curl', ['-V'], { encoding: 'utf8' }));
  } catch {
    return false;
  }
}

interface Tinyproxy {
  url: string;
  stop(): Promise<void>;
}

/** Debian's tinyproxy on a free loopback port, in the foreground, with a configuration of the run's own. */
async function startTinyproxy(work: string): Promise<Tinyproxy | undefined> {
  const bin = ['/usr/bin/tinyproxy', '/usr/sbin/tinyproxy'].find((p) => existsSync(p));
  if (bin === undefined) return undefined;
  const port = 20000 + Math.floor(Math.random() * 20000);
  const conf = join(work, 'tinyproxy.conf');
  // No ConnectPort line: CONNECT to any port, since the emulator's is not 443.
  await writeFile(
    conf,
    `Port ${port}\nListen 127.0.0.1\nAllow 127.0.0.1\nTimeout 60\nMaxClients 200\nLogLevel Critical\nDisableViaHeader Yes\n${process.getuid?.() === 0 ? 'User nobody\nGroup nogroup\n' : ''}`,
  );
  const child: ChildProcess = spawn(bin, ['-d', '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const up = await new Promise<boolean>((resolve) => {
      const s = createConnection({ port, host: '127.0.0.1' }, () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (up) {
      return {
        url: `http://127.0.0.1:${port}`,
        stop: () =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      };
    }
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`tinyproxy did not start: ${stderr.slice(0, 300)}`);
}

export async function benchLinkTls(h: Harness, runs: number, fetchLoop: string): Promise<string[]> {
  const curl11 = join(h.work, 'curl-http1.sh');
  const curl2 = join(h.work, 'curl-http2.sh');
  await writeCurlJqScript(curl11, '--compressed --http1.1');
  const http2 = curlHasHttp2();
  if (http2) await writeCurlJqScript(curl2, '--compressed --http2');
  const idcli = (...args: string[]) => [process.execPath, BIN, 'list', '/v1/records', ...args];
  const lines: string[] = [...systemStoreCost(runs), ''];
  for (const link of LINKS) {
    let asIsMs = Number.NaN;
    const title = `link over TLS: ${link.bandwidthMbps} Mbit/s, ${link.latencyMs} ms round trip charged per round trip (TCP and TLS handshakes included); ${RECORDS.toLocaleString('en')} records, idcli with its defaults`;
    log(title);
    const emu = await startEmu({ items: 0, records: RECORDS, link, tls: true });
    try {
      const first = `${emu.baseUrl}/v1/records`;
      const clients: Client[] = [
        {
          name: 'idcli list',
          cmd: idcli(),
          peerBudget: link.peerBudget,
          ...('floorBudget' in link ? { floorBudget: link.floorBudget } : {}),
        },
        { name: 'idcli list --concurrency 1', cmd: idcli('--concurrency', '1') },
        { name: 'fetch loop (peer)', cmd: [process.execPath, fetchLoop, first] },
        { name: 'curl --compressed --http1.1 + jq, pages of 1000', cmd: ['bash', curl11, `${first}?pageSize=1000`] },
      ];
      if (http2) {
        clients.push({
          name: 'curl --compressed --http2 + jq, pages of 1000',
          cmd: ['bash', curl2, `${first}?pageSize=1000`],
        });
      }
      const rows = await runRows(h, emu, clients, runs);
      lines.push(title, ...report(rows, link));
      if (rows[0]!.samples.length > 0) asIsMs = median(rows[0]!.samples.map((s) => s.ms));
      if (link.latencyMs === 100) lines.push(...(await throughTinyproxy(h, emu, runs, link, idcli, curl11)));
    } finally {
      await emu.stop();
    }
    if (link.latencyMs === 100) lines.push(...(await handshakeCost(h, runs, link, idcli, asIsMs)));
    lines.push('');
  }
  return lines;
}

/**
 * What trusting the system's CA store adds to the first HTTPS request of a process: building idcli's TLS context
 * (src/http/trust.ts: Node's roots, the system's store, NODE_EXTRA_CA_CERTS) against building Node's default one,
 * which a request made without it would have built. Later requests reuse the context.
 */
function systemStoreCost(runs: number): string[] {
  const time = (fn: () => unknown): number => {
    const started = performance.now();
    fn();
    return performance.now() - started;
  };
  const ours: number[] = [];
  const nodes: number[] = [];
  let count = 0;
  for (let i = 0; i < Math.max(runs, 5); i++) {
    ours.push(time(() => (count = buildTrustStore(process.env).anchors.length)));
    nodes.push(time(() => createSecureContext()));
  }
  const cost = median(ours) - median(nodes);
  const title = "system's CA store: what reading it adds to the first HTTPS request of a process";
  log(title);
  return [
    title,
    `  ${cost.toFixed(1)} ms (idcli's context of ${count} CAs ${median(ours).toFixed(1)} ms, Node's default ${median(nodes).toFixed(1)} ms; medians of ${ours.length}, Node ${process.version})`,
  ];
}

/**
 * What the handshakes cost the default walk, the measure that decides for HTTP/2 (over 20% at 100 ms): the same walk
 * over TLS on a link that charges the latency before each response only, where connecting and handshakes are free as
 * if every connection had been opened beforehand; and over plain HTTP on both links, to tell TCP from TLS.
 */
async function handshakeCost(
  h: Harness,
  runs: number,
  link: Link,
  idcli: (...args: string[]) => string[],
  asIsMs: number,
): Promise<string[]> {
  const out = ["the same default walk without the handshakes' cost:"];
  const walks = [
    { name: 'idcli list, TLS, connecting free', tls: true, roundTrip: false },
    { name: 'idcli list, plain HTTP, same link', tls: false, roundTrip: true },
    { name: 'idcli list, plain HTTP, connecting free', tls: false, roundTrip: false },
  ];
  let freeMs = Number.NaN;
  for (const w of walks) {
    const emu = await startEmu({ items: 0, records: RECORDS, link: { ...link, roundTrip: w.roundTrip }, tls: w.tls });
    try {
      const rows = await runRows(h, emu, [{ name: w.name, cmd: idcli() }], runs);
      if (w.tls && rows[0]!.samples.length > 0) freeMs = median(rows[0]!.samples.map((s) => s.ms));
      out.push(...report(rows, link).slice(1));
    } finally {
      await emu.stop();
    }
  }
  // One TCP and one TLS handshake are paid whatever the protocol; HTTP/2 could save only the others.
  const all = (asIsMs - freeMs) / asIsMs;
  const beyondOne = (asIsMs - freeMs - 2 * link.latencyMs) / asIsMs;
  out.push(
    `handshakes' share of the default walk over TLS: ${(all * 100).toFixed(0)}% in all, ${(beyondOne * 100).toFixed(0)}% beyond the one TCP and TLS handshake any protocol pays (HTTP/2 asked for above 20%)`,
  );
  return out;
}

async function throughTinyproxy(
  h: Harness,
  emu: EmulatorChild,
  runs: number,
  link: Link,
  idcli: (...args: string[]) => string[],
  curl11: string,
): Promise<string[]> {
  const proxy = await startTinyproxy(h.work);
  if (proxy === undefined)
    return ['through a forward proxy: skipped, tinyproxy is not installed (apt-get install tinyproxy)'];
  try {
    const env = { HTTPS_PROXY: proxy.url, https_proxy: proxy.url };
    const clients: Client[] = [
      { name: 'idcli list, via tinyproxy', cmd: idcli(), env },
      { name: 'idcli list --concurrency 1, via tinyproxy', cmd: idcli('--concurrency', '1'), env },
      {
        name: 'curl --http1.1 + jq, via tinyproxy',
        cmd: ['bash', curl11, `${emu.baseUrl}/v1/records?pageSize=1000`],
        env,
      },
    ];
    const rows = await runRows(h, emu, clients, runs);
    return [
      `through tinyproxy (on the client's side of the link; a CONNECT tunnel per connection, counted as conns):`,
      ...report(rows, link).slice(1),
    ];
  } finally {
    await proxy.stop();
  }
}

/**
 * What the whole-process benchmarks share: the flags of `npm run bench`, the emulator in a child process, a
 * scratch directory, scripts bundled to plain JS, and timing a command (wall time around the process, peak RSS
 * from /usr/bin/time %M or, without it, from a preloaded exit hook reading process.resourceUsage()).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'idcli.cjs');
const TIME = '/usr/bin/time';

/**
 * --quick: fewer runs, no 1M/2M items, no curl+jq on loopback; --runs <n>; --only startup|list|dump|link|window runs one
 * section; --records <n>: the record count of the link section's nearby links (default 100000); --far: of the
 * link section, only the far link (100 ms) with idcli's defaults, cursor-based and rate-limited runs; --tls: of the
 * link section, only the runs over HTTPS on a link that charges every round trip (bench/link-tls.ts).
 */
export function benchFlags() {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean' },
      runs: { type: 'string' },
      only: { type: 'string' },
      records: { type: 'string' },
      far: { type: 'boolean' },
      tls: { type: 'boolean' },
    },
  });
  return values;
}

export interface Sample {
  ms: number;
  rssKb: number | undefined;
}

export interface EmulatorStats {
  wireBytes: number;
  throttled: number;
  pages: number;
  /** Connections accepted, TLS handshakes completed and, of those, resumed ones and HTTP/2 ones. */
  tcp: number;
  tls: number;
  resumed: number;
  http2: number;
}

export interface EmulatorChild {
  baseUrl: string;
  /** The PEM file of the run's CA, when the emulator serves HTTPS. */
  caFile: string | undefined;
  /** Bytes the emulator has written to its sockets so far. */
  wireBytes(): Promise<number>;
  /** The same, with the 429s and the pages (200s) of collections answered so far. */
  stats(): Promise<EmulatorStats>;
  stop(): Promise<void>;
}

export interface EmulatorSetup {
  /** Items in /v1/bench (benchItems). */
  items: number;
  /** Added to every collection response. */
  latencyMs?: number;
  /** Realistic records in /v1/records. */
  records?: number;
  /** With roundTrip, the latency is the round trip, charged by a relay in front (test/emulator/relay.ts). */
  link?: { bandwidthMbps: number; latencyMs: number; roundTrip?: boolean };
  /** Serve HTTPS with a CA made for the run. */
  tls?: boolean;
  /** A rate limit: 429 with Retry-After past this many collection requests in flight. */
  maxInFlight?: number;
  /** Pages of this many items in /v1/growing, from 1 KB to 30 MB (growingItems). */
  growing?: number;
  /** This many pages of 40 MB in /v1/large, after 300 of 1 KB, at --page-size 1. */
  large?: number;
  /** A server that slows with load (EmulatorOptions.loadLatency). */
  loadLatency?: { above: number; msPerSquare: number };
}

/** The emulator in a process of its own (bench/emulator-child.ts), so it never shares the measured event loop. */
export async function startEmu(setup: EmulatorSetup): Promise<EmulatorChild> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    BENCH_ITEMS: String(setup.items),
    BENCH_LATENCY_MS: String(setup.latencyMs ?? 0),
    BENCH_RECORDS: String(setup.records ?? 0),
  };
  if (setup.maxInFlight !== undefined) env['BENCH_MAX_IN_FLIGHT'] = String(setup.maxInFlight);
  if (setup.growing !== undefined) env['BENCH_GROWING'] = String(setup.growing);
  if (setup.large !== undefined) env['BENCH_LARGE'] = String(setup.large);
  if (setup.loadLatency) {
    env['BENCH_LOAD_ABOVE'] = String(setup.loadLatency.above);
    env['BENCH_LOAD_MS_PER_SQUARE'] = String(setup.loadLatency.msPerSquare);
  }
  if (setup.link) {
    env['BENCH_LINK_MBPS'] = String(setup.link.bandwidthMbps);
    env['BENCH_LINK_LATENCY_MS'] = String(setup.link.latencyMs);
    if (setup.link.roundTrip) env['BENCH_LINK_ROUND_TRIP'] = '1';
  }
  if (setup.tls) env['BENCH_TLS'] = '1';
  const child: ChildProcess = spawn(
    process.execPath,
    ['--max-old-space-size=4096', '--import', 'tsx', join(ROOT, 'bench', 'emulator-child.ts')],
    { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! });
  const waiting: Array<{ resolve: (line: string) => void; reject: (err: Error) => void }> = [];
  let exited: Error | null = null;
  lines.on('line', (l) => waiting.shift()?.resolve(l));
  child.once('exit', (code) => {
    exited = new Error(`emulator exited with ${code}`);
    for (const w of waiting.splice(0)) w.reject(exited);
  });
  const nextLine = () =>
    new Promise<string>((resolve, reject) => {
      if (exited) reject(exited);
      else waiting.push({ resolve, reject });
    });
  const { baseUrl, caFile } = JSON.parse(await nextLine()) as { baseUrl: string; caFile?: string };
  return {
    baseUrl,
    caFile,
    wireBytes: async () => {
      const answer = nextLine();
      child.stdin!.write('wire\n');
      return (JSON.parse(await answer) as { wireBytes: number }).wireBytes;
    },
    stats: async () => {
      const answer = nextLine();
      child.stdin!.write('stats\n');
      return JSON.parse(await answer) as EmulatorStats;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        lines.close();
        child.once('exit', () => resolve());
        child.stdin!.end();
      }),
  };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export interface Harness {
  /** A scratch directory, removed by close(). */
  work: string;
  /** Runs one command with stdout to `out` (default /dev/null); wall time around the whole process. */
  measure(cmd: string[], env: NodeJS.ProcessEnv, out?: string): Promise<Sample>;
  /** Bundles a bench script to plain JS, so it starts exactly like the built CLI (no TypeScript loader). */
  bundle(entry: string): Promise<string>;
  close(): Promise<void>;
}

export async function createHarness(): Promise<Harness> {
  if (!existsSync(join(ROOT, 'dist', 'cli.cjs'))) throw new Error('build first: npm run build');
  const work = await mkdtemp(join(tmpdir(), 'idcli-bench-'));
  const rssHook = join(work, 'rss-hook.mjs');
  await writeFile(
    rssHook,
    "import { writeFileSync } from 'node:fs';\nprocess.on('exit', () => { if (process.env.BENCH_RSS_FILE) writeFileSync(process.env.BENCH_RSS_FILE, String(process.resourceUsage().maxRSS)); });\n",
  );

  async function measure(cmd: string[], env: NodeJS.ProcessEnv, out = '/dev/null'): Promise<Sample> {
    const rssFile = join(work, 'rss.txt');
    await rm(rssFile, { force: true });
    const useTime = existsSync(TIME);
    const argv = useTime ? [TIME, '-f', '%M', '-o', rssFile, ...cmd] : cmd;
    const childEnv = useTime ? env : { ...env, NODE_OPTIONS: `--import=${rssHook}`, BENCH_RSS_FILE: rssFile };
    const fh = await open(out, 'w');
    const started = performance.now();
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(argv[0]!, argv.slice(1), { env: childEnv, cwd: ROOT, stdio: ['ignore', fh.fd, 'pipe'] });
      let err = '';
      child.stderr?.on('data', (b: Buffer) => {
        err += b.toString();
      });
      child.on('error', reject);
      child.on('close', (c) => resolve({ code: c, stderr: err }));
    });
    const ms = performance.now() - started;
    await fh.close();
    if (code !== 0) throw new Error(`${cmd.join(' ')} exited with ${code}: ${stderr.slice(0, 500)}`);
    let rssKb: number | undefined;
    try {
      const text = (await readFile(rssFile, 'utf8')).trim().split('\n').pop() ?? '';
      rssKb = /^\d+$/.test(text) ? Number(text) : undefined;
    } catch {
      rssKb = undefined;
    }
    return { ms, rssKb };
  }

  async function bundle(entry: string): Promise<string> {
    const outfile = join(work, `${entry.replace(/\.ts$/, '')}.mjs`);
    await build({
      entryPoints: [join(ROOT, 'bench', entry)],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      logLevel: 'warning',
    });
    return outfile;
  }

  return { work, measure, bundle, close: () => rm(work, { recursive: true, force: true }) };
}

/**
 * The environment idcli runs in: a token as is, a config directory of the bench's own, nothing of the user's.
 * With a CA file, Node and curl trust it as users trust a company CA.
 */
export function cliEnv(work: string, baseUrl: string, caFile?: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'],
    HOME: process.env['HOME'],
    IDCLI_BASE_URL: baseUrl,
    IDCLI_ACCESS_TOKEN: 'bench',
    IDCLI_CONFIG_DIR: join(work, 'config'),
    ...(caFile === undefined ? {} : { NODE_EXTRA_CA_CERTS: caFile, CURL_CA_BUNDLE: caFile }),
  };
}

/**
 * What users write by hand without idcli: curl | jq -c '.items[]' and jq -r '.links.next.href' in a loop.
 * `curlFlags` go to every curl (e.g. --compressed).
 */
export async function writeCurlJqScript(path: string, curlFlags = ''): Promise<void> {
  const flags = curlFlags === '' ? '' : `${curlFlags} `;
  await writeFile(
    path,
    `#!/usr/bin/env bash
# What users write by hand without idcli.
set -euo pipefail
url="$1"
while [ -n "$url" ]; do
  page=$(curl -sf ${flags}-H "Authorization: Bearer bench" "$url")
  printf '%s' "$page" | jq -c '.items[]'
  url=$(printf '%s' "$page" | jq -r '.links.next.href // empty')
done
`,
  );
}

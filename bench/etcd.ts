/**
 * The shared sign-in (IDCLI_CREDENTIAL_STORE=etcd) against a real three-member etcd cluster on loopback:
 * - a cached `idcli token` read from the cluster next to the file store's cached token, interleaved in one run
 *   (budget: 1.5x the file store's median);
 * - 40 machines running `token --refresh` at once against a token endpoint that takes 100 ms to answer (budget:
 *   all done within 3 s, no refresh token presented twice), a median over a few rounds.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../test/emulator/index.js';
import { etcdMachine, startEtcdCluster } from '../test/support/etcd-cluster.js';
import { BIN, median } from './harness.js';

const RUNS = Number(process.env.BENCH_ETCD_RUNS ?? 30);
const ROUNDS = Number(process.env.BENCH_ETCD_ROUNDS ?? 5);
const MACHINES = 40;

function once(env: NodeJS.ProcessEnv): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [BIN, 'token'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`idcli token exited ${r.status}: ${r.stderr}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env }, (err, _stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr }),
    );
  });
}

export async function benchEtcd(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), 'idcli-bench-etcd-'));
  const cluster = await startEtcdCluster({ onDisk: true });
  const endpoints = cluster.members.map((m) => m.clientUrl).join(',');
  const emulator = await startEmulator({ loopbackAnyPort: true, callbackUrl: 'http://127.0.0.1:8765/callback' });
  try {
    const base: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: tmp,
      IDCLI_BASE_URL: emulator.baseUrl,
      IDCLI_CLIENT_ID: emulator.client.id,
      IDCLI_CLIENT_NAME: emulator.client.name,
      IDCLI_REDIRECT_URI: 'http://127.0.0.1:0/callback',
      BROWSER: join(BIN, '..', '..', 'test', 'support', 'http-browser.mjs'),
    };
    const machine = (name: string, prefix: string): NodeJS.ProcessEnv => ({
      ...base,
      ...etcdMachine(join(tmp, name), cluster, prefix),
    });
    const fileEnv = { ...base, IDCLI_CONFIG_DIR: join(tmp, 'file'), IDCLI_CREDENTIAL_STORE: 'file' };
    for (const env of [fileEnv, machine('laptop', '/bench-cached/')]) {
      const r = await run(['login', '--timeout', '30'], env);
      if (r.code !== 0) throw new Error(`login failed: ${r.stderr}`);
    }

    // Cached token: interleaved, so both see the same machine load.
    const etcdEnv = machine('runner', '/bench-cached/');
    const times = { file: [] as number[], etcd: [] as number[] };
    once(fileEnv);
    once(etcdEnv);
    for (let i = 0; i < RUNS; i++) {
      times.file.push(once(fileEnv));
      times.etcd.push(once(etcdEnv));
    }
    const file = median(times.file);
    const etcd = median(times.etcd);
    const ratio = etcd / file;
    console.log(`\nshared sign-in (etcd ${endpoints.split(',').length} members on loopback), Node ${process.version}`);
    console.log(`cached idcli token, median of ${RUNS} interleaved runs:`);
    console.log(
      `  file store ${file.toFixed(1)} ms, etcd ${etcd.toFixed(1)} ms: ${ratio.toFixed(2)}x (budget 1.5x)${ratio <= 1.5 ? '  ok' : '  OVER'}`,
    );

    // 40 machines refreshing at once, the token endpoint answering after 100 ms.
    const walls: number[] = [];
    let reused = 0;
    let failed = 0;
    let refreshes = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const prefix = `/bench-fleet-${round}/`;
      const first = await run(['login', '--timeout', '30'], machine(`fleet-${round}-laptop`, prefix));
      if (first.code !== 0) throw new Error(`login failed: ${first.stderr}`);
      const envs = Array.from({ length: MACHINES }, (_, i) => machine(`fleet-${round}-${i}`, prefix));
      const before = emulator.tokenEvents.length;
      emulator.inject({ path: '/oauth/token', fault: { kind: 'latency', ms: 100 }, times: Infinity });
      const t0 = performance.now();
      const results = await Promise.all(envs.map((env) => run(['token', '--refresh'], env)));
      walls.push(performance.now() - t0);
      emulator.clearFaults();
      const events = emulator.tokenEvents.slice(before).filter((e) => e.grant === 'refresh_token');
      refreshes += events.length;
      reused += events.filter((e) => e.reuse).length;
      failed += results.filter((r) => r.code !== 0).length;
    }
    const wall = median(walls);
    const ok = wall <= 3000 && reused === 0 && failed === 0;
    console.log(`${MACHINES} machines x token --refresh at once, token endpoint 100 ms, median of ${ROUNDS} rounds:`);
    console.log(
      `  all done in ${(wall / 1000).toFixed(2)} s (rounds ${walls.map((w) => (w / 1000).toFixed(2)).join(', ')} s), ` +
        `${(refreshes / ROUNDS).toFixed(1)} refreshes a round, ${reused} reused, ${failed} failed ` +
        `(budget 3 s, zero reuse)${ok ? '  ok' : '  OVER'}`,
    );
  } finally {
    await emulator.close();
    await cluster.close();
    await rm(tmp, { recursive: true, force: true });
  }
}

/**
 * A real etcd cluster of three members on loopback for the shared sign-in tests: private data directories, free
 * ports (bound on port 0 first, then handed to etcd; a start that loses the race is retried), each member's /health
 * polled over HTTP with a deadline, members stopped by pid. Optional TLS (a CA and certificates made here with
 * openssl) and auth.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unusedPort } from './listen.js';
import { until } from './until.js';

export const ETCD_BIN = '/usr/bin/etcd';
export const ETCDCTL_BIN = '/usr/bin/etcdctl';
const HEARTBEAT_MS = '25';
const ELECTION_MS = '250';

export interface EtcdMember {
  name: string;
  clientUrl: string;
  peerUrl: string;
  dataDir: string;
  process: ChildProcess | undefined;
}

export interface EtcdTls {
  ca: string;
  clientCert: string;
  clientKey: string;
}

export interface EtcdCluster {
  members: EtcdMember[];
  endpoints: string;
  tls: EtcdTls | undefined;
  /** SIGKILL one member, by its pid, and wait for it to be gone. */
  kill(index: number): Promise<void>;
  /** Wait until every member still running says it is healthy: after a kill, the survivors have a leader again. */
  settled(): Promise<void>;
  /** Run etcdctl against the cluster (as root when auth is on: `--user root:…` in args). */
  ctl(args: string[], env?: Record<string, string>): string;
  close(): Promise<void>;
}

/**
 * A port no member of this start has: a port released may be taken again at once, and etcd refuses a cluster whose
 * members share a URL ("has duplicate url").
 */
async function distinctPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = await unusedPort();
    if (!taken.has(port)) {
      taken.add(port);
      return port;
    }
  }
}

function makeTls(dir: string): EtcdTls & { serverCert: string; serverKey: string } {
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run(
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2'].concat([
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-subj',
      '/CN=idcli test etcd CA',
    ]),
  );
  const leaf = (name: string, ext: string) => {
    run(
      ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`].concat([
        '-out',
        `${name}.csr`,
        '-subj',
        `/CN=${name}`,
      ]),
    );
    writeFileSync(join(dir, `${name}.ext`), ext);
    run(
      [
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '2',
      ].concat(['-out', `${name}.pem`, '-extfile', `${name}.ext`]),
    );
  };
  leaf('server', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
  leaf('client', 'extendedKeyUsage=clientAuth\n');
  return {
    ca: join(dir, 'ca.pem'),
    serverCert: join(dir, 'server.pem'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'client.pem'),
    clientKey: join(dir, 'client.key'),
  };
}

/**
 * Where the members keep their data: tmpfs when there is one. etcd syncs its log to disk on every write, which on a
 * shared disk makes each write wait on other tests' I/O; a throw-away test cluster needs no durability, and the
 * etcd here (3.4) has no --unsafe-no-fsync.
 */
function dataRoot(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}

/** Whether the member at `clientUrl` says it is healthy: it has a leader and a quorum read went through. */
function healthy(clientUrl: string, tls: EtcdTls | undefined): Promise<boolean> {
  const secure = tls && {
    ca: readFileSync(tls.ca),
    cert: readFileSync(tls.clientCert),
    key: readFileSync(tls.clientKey),
  };
  return new Promise((resolve) => {
    const request = secure ? httpsRequest : httpRequest;
    const req = request(`${clientUrl}/health`, { agent: false, timeout: 2_000, ...secure }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve(res.statusCode === 200 && /"health":\s*"true"/.test(body)));
      res.on('error', () => resolve(false));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

export interface EtcdClusterOptions {
  tls?: boolean;
  size?: number;
  /** Data on disk, synced as a real cluster's is (the bench), rather than on tmpfs. */
  onDisk?: boolean;
}

export async function startEtcdCluster(opts: EtcdClusterOptions = {}): Promise<EtcdCluster> {
  const size = opts.size ?? 3;
  // Not cli.ts's tempDir: that module needs vitest, and the bench starts its cluster here too.
  const path = await mkdtemp(join(opts.onDisk ? tmpdir() : dataRoot(), 'idcli-etcd-'));
  const tmp = { path, cleanup: () => rm(path, { recursive: true, force: true }) };
  const tls = opts.tls ? makeTls(tmp.path) : undefined;
  const scheme = tls ? 'https' : 'http';
  for (let attempt = 1; ; attempt++) {
    const members: EtcdMember[] = [];
    const ports = new Set<number>();
    for (let i = 0; i < size; i++) {
      const dataDir = join(tmp.path, `m${i}-${attempt}`);
      mkdirSync(dataDir, { mode: 0o700 });
      members.push({
        name: `m${i}`,
        clientUrl: `${scheme}://127.0.0.1:${await distinctPort(ports)}`,
        peerUrl: `http://127.0.0.1:${await distinctPort(ports)}`,
        dataDir,
        process: undefined,
      });
    }
    const initial = members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
    const logs: string[] = [];
    for (const m of members) {
      const args = ['--name', m.name, '--data-dir', m.dataDir, '--listen-client-urls', m.clientUrl]
        .concat(['--advertise-client-urls', m.clientUrl, '--listen-peer-urls', m.peerUrl])
        .concat(['--initial-advertise-peer-urls', m.peerUrl, '--initial-cluster', initial])
        .concat(['--initial-cluster-state', 'new', '--initial-cluster-token', `t${process.pid}-${attempt}`])
        // Members on one machine answer each other within milliseconds: short ticks make the first election, and the
        // next one after a member is killed, quick.
        .concat(['--heartbeat-interval', HEARTBEAT_MS, '--election-timeout', ELECTION_MS, '--log-level', 'error'])
        .concat(tls ? ['--cert-file', tls.serverCert, '--key-file', tls.serverKey] : [])
        .concat(tls ? ['--trusted-ca-file', tls.ca, '--client-cert-auth'] : []);
      const child = spawn(ETCD_BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr?.on('data', (d: Buffer) => logs.push(d.toString()));
      m.process = child;
    }
    const endpoints = members.map((m) => m.clientUrl).join(',');
    const tlsArgs = tls ? ['--cacert', tls.ca, '--cert', tls.clientCert, '--key', tls.clientKey] : [];
    const ctl = (args: string[], env: Record<string, string> = {}) =>
      execFileSync(ETCDCTL_BIN, ['--endpoints', endpoints, ...tlsArgs, ...args], {
        env: { ...process.env, ETCDCTL_API: '3', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }).toString();
    const kill = async (index: number) => {
      const child = members[index]?.process;
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      process.kill(child.pid!, 'SIGKILL');
      await gone;
    };
    const killAll = () => Promise.all(members.map((_, i) => kill(i)));
    const running = () => members.filter((m) => m.process?.exitCode === null && m.process.signalCode === null);
    const allHealthy = async (of: EtcdMember[]) =>
      (await Promise.all(of.map((m) => healthy(m.clientUrl, tls)))).every(Boolean) ? true : undefined;
    const cluster: EtcdCluster = {
      members,
      endpoints,
      tls,
      kill,
      settled: async () => {
        await until(() => allHealthy(running()), 30_000, 'the running etcd members to be healthy');
      },
      ctl,
      async close() {
        await killAll();
        await tmp.cleanup();
      },
    };
    const lostRace = () => logs.join('').includes('address already in use');
    try {
      await until(
        async () => {
          if (lostRace()) throw new Error('port taken');
          return allHealthy(members);
        },
        30_000,
        'the etcd cluster to become healthy',
      );
      return cluster;
    } catch (err) {
      await killAll();
      if (attempt < 3 && lostRace()) continue;
      await tmp.cleanup();
      throw new Error(`etcd did not start: ${String(err)}\n${logs.join('').slice(-2000)}`);
    }
  }
}

/**
 * The environment of one machine of a fleet sharing a sign-in through `c`: its own HOME and config directory (made
 * here, under `home`), the etcd store on `prefix`, then `extra` (a user, TLS files).
 */
export function etcdMachine(
  home: string,
  c: EtcdCluster,
  prefix: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  mkdirSync(join(home, 'config'), { recursive: true, mode: 0o700 });
  return {
    HOME: home,
    IDCLI_CONFIG_DIR: join(home, 'config'),
    IDCLI_CREDENTIAL_STORE: 'etcd',
    IDCLI_ETCD_ENDPOINTS: c.endpoints,
    IDCLI_ETCD_PREFIX: prefix,
    ...extra,
  };
}

/**
 * A real etcd cluster of three members on loopback for the shared sign-in tests: private data directories, free
 * ports (bound on port 0 first, then handed to etcd; a start that loses the race is retried), health polled with a
 * deadline, members stopped by pid. Optional TLS (a CA and certificates made here with openssl) and auth.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { until } from './until.js';

export const ETCD_BIN = '/usr/bin/etcd';
export const ETCDCTL_BIN = '/usr/bin/etcdctl';

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
  /** Run etcdctl against the cluster (as root when auth is on: `--user root:…` in args). */
  ctl(args: string[], env?: Record<string, string>): string;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
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

export async function startEtcdCluster(opts: { tls?: boolean; size?: number } = {}): Promise<EtcdCluster> {
  const size = opts.size ?? 3;
  // Not cli.ts's tempDir: that module needs vitest, and the bench starts its cluster here too.
  const path = await mkdtemp(join(tmpdir(), 'idcli-etcd-'));
  const tmp = { path, cleanup: () => rm(path, { recursive: true, force: true }) };
  const tls = opts.tls ? makeTls(tmp.path) : undefined;
  const scheme = tls ? 'https' : 'http';
  for (let attempt = 1; ; attempt++) {
    const members: EtcdMember[] = [];
    for (let i = 0; i < size; i++) {
      const dataDir = join(tmp.path, `m${i}-${attempt}`);
      mkdirSync(dataDir, { mode: 0o700 });
      members.push({
        name: `m${i}`,
        clientUrl: `${scheme}://127.0.0.1:${await freePort()}`,
        peerUrl: `http://127.0.0.1:${await freePort()}`,
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
        .concat(['--heartbeat-interval', '50', '--election-timeout', '500', '--log-level', 'error'])
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
    const cluster: EtcdCluster = {
      members,
      endpoints,
      tls,
      kill,
      ctl,
      async close() {
        for (let i = 0; i < members.length; i++) await kill(i);
        await tmp.cleanup();
      },
    };
    const lostRace = () => logs.join('').includes('address already in use');
    try {
      await until(
        () => {
          if (lostRace()) throw new Error('port taken');
          try {
            ctl(['endpoint', 'health', '--command-timeout=2s']);
            return true;
          } catch {
            return undefined;
          }
        },
        30_000,
        'the etcd cluster to become healthy',
      );
      return cluster;
    } catch (err) {
      for (let i = 0; i < members.length; i++) await kill(i);
      if (attempt < 3 && lostRace()) continue;
      await tmp.cleanup();
      throw new Error(`etcd did not start: ${String(err)}\n${logs.join('').slice(-2000)}`);
    }
  }
}

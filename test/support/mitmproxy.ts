/**
 * Debian's mitmproxy as a TLS-inspecting HTTPS proxy on 127.0.0.1, the way a company network intercepts HTTPS: it
 * answers each CONNECT with a certificate its own CA signs for the host asked for, and passes the requests on to
 * the real server. Each instance has a private, freshly made CA (its own confdir), and trusts the upstream's CA.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './until.js';

export const MITMDUMP = '/usr/bin/mitmdump';

export interface Mitmproxy {
  url: string;
  /** Its CA's certificate (PEM): what a company installs on its machines. */
  caFile: string;
  /** The flows it relayed so far, one line each (`POST https://127.0.0.1:…/oauth/token`, …). */
  log(): string;
  close(): Promise<void>;
}

export async function startMitmproxy(upstreamCaFile: string): Promise<Mitmproxy> {
  if (!existsSync(MITMDUMP)) throw new Error('mitmdump is missing: apt-get install mitmproxy (.ci/run does)');
  const confdir = await mkdtemp(join(tmpdir(), 'idcli-mitm-'));
  // Port 0: the kernel picks a free port, and mitmdump names it in its first line.
  const child: ChildProcess = spawn(
    MITMDUMP,
    [
      '--listen-host',
      '127.0.0.1',
      '--listen-port',
      '0',
      '--set',
      `confdir=${confdir}`,
      '--set',
      `ssl_verify_upstream_trusted_ca=${upstreamCaFile}`,
    ],
    { env: { PATH: process.env.PATH, HOME: confdir, PYTHONUNBUFFERED: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString('utf8')));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString('utf8')));
  let exited = false;
  child.on('exit', () => (exited = true));
  const close = async (): Promise<void> => {
    if (!exited) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    }
    await rm(confdir, { recursive: true, force: true });
  };
  try {
    const port = await until(
      () => {
        if (exited) throw new Error(`mitmdump exited: ${out}`);
        return /listening at 127\.0\.0\.1:(\d+)/.exec(out)?.[1];
      },
      30_000,
      'mitmdump to listen',
    );
    return { url: `http://127.0.0.1:${port}`, caFile: join(confdir, 'mitmproxy-ca-cert.pem'), log: () => out, close };
  } catch (err) {
    await close();
    throw err;
  }
}

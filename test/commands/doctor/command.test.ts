// Each `idcli doctor` runs in process (test/support/run-command.ts) against the emulator over each scheme.
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../emulator/index.js';
import { baseEnv, tempDir } from '../../support/cli.js';
import { FakeClock } from '../../support/clock.js';
import { runCommand } from '../../support/run-command.js';
import { until } from '../../support/until.js';
import { SCHEMES, type Scheme, schemeSetup } from '../../support/scheme.js';

let emulator: Emulator;
let dir: { path: string; cleanup: () => Promise<void> };
/** The emulator over each scheme, and the environment that trusts it. */
const over = new Map<Scheme, { emu: Emulator; env: Record<string, string> }>();
beforeAll(async () => {
  dir = await tempDir();
  for (const scheme of SCHEMES) {
    const setup = schemeSetup(scheme, dir.path);
    over.set(scheme, { emu: await startEmulator(setup.tls ? { tls: setup.tls } : {}), env: setup.env });
  }
  emulator = over.get('http')!.emu;
});
afterAll(async () => {
  for (const { emu } of over.values()) await emu.close();
  await dir.cleanup();
});

function env(extra: Record<string, string | undefined> = {}, emu = emulator) {
  return baseEnv({
    IDCLI_CONFIG_DIR: dir.path,
    IDCLI_CREDENTIAL_STORE: 'file',
    IDCLI_BASE_URL: emu.baseUrl,
    IDCLI_CLIENT_ID: emu.client.id,
    IDCLI_CLIENT_NAME: emu.client.name,
    IDCLI_REDIRECT_URI: 'http://127.0.0.1:0/callback',
    ...extra,
  });
}

interface Check {
  id: string;
  status: 'pass' | 'warn' | 'fail';
  detail: string;
  fix?: string;
}

async function doctorJson(e: Record<string, string | undefined>) {
  const r = await runCommand(['doctor', '--json'], { env: e });
  return { ...r, report: JSON.parse(r.stdout) as { ok: boolean; checks: Check[] } };
}

const byId = (checks: Check[], id: string) => checks.find((c) => c.id === id)!;

describe('idcli doctor', () => {
  it.each(SCHEMES)(
    'passes every check with a complete configuration and a reachable service, over %s',
    async (scheme) => {
      const { emu, env: trust } = over.get(scheme)!;
      const { code, report } = await doctorJson(env(trust, emu));
      expect(code).toBe(0);
      expect(report.ok).toBe(true);
      expect(report.checks.map((c) => c.id)).toEqual([
        'config',
        'reachable',
        'clock',
        'tls',
        'port',
        'localhost',
        'store',
        'proxy',
        'runtime',
      ]);
      for (const c of report.checks) expect(c.status, `${c.id}: ${c.detail}`).toBe('pass');
      expect(emu.requests.some((r) => r.path === '/oauth/authorize')).toBe(true);
    },
  );

  it('prints a readable report on stdout and exits 2 when a check fails, each failure with its fix', async () => {
    const r = await runCommand(['doctor'], {
      env: env({ IDCLI_CLIENT_NAME: undefined, IDCLI_BASE_URL: 'http://127.0.0.1:9' }),
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/FAIL\s+configuration\s+profile 'default' lacks client-name/);
    expect(r.stdout).toContain('fix: set client-name with --client-name, IDCLI_CLIENT_NAME');
    expect(r.stdout).toMatch(/FAIL\s+identity service reachable/);
    expect(r.stderr).toContain('checks failed');
  });

  it('reports an invalid setting as a failed configuration check instead of stopping', async () => {
    const { code, report } = await doctorJson(env({ IDCLI_BASE_URL: 'http://id.example.com' }));
    expect(code).toBe(2);
    expect(byId(report.checks, 'config')).toMatchObject({ status: 'fail' });
    expect(byId(report.checks, 'config').detail).toContain('https');
    expect(byId(report.checks, 'proxy').status).toBe('pass');
  });

  it('names a busy redirect port', async () => {
    const blocker = createNetServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const { code, report } = await doctorJson(env({ IDCLI_REDIRECT_URI: `http://127.0.0.1:${port}/callback` }));
      expect(code).toBe(2);
      expect(byId(report.checks, 'port')).toMatchObject({ status: 'fail' });
      expect(byId(report.checks, 'port').detail).toContain(String(port));
    } finally {
      blocker.close();
    }
  });

  it('measures clock skew against the Date header', async () => {
    const skewed: Server = createServer((_req, res) => {
      res.setHeader('date', new Date(Date.now() - 10 * 60_000).toUTCString());
      res.end('ok');
    });
    await new Promise<void>((resolve) => skewed.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(skewed.address() as AddressInfo).port}`;
    try {
      const { code, report } = await doctorJson(env({ IDCLI_BASE_URL: base }));
      expect(code).toBe(2);
      expect(byId(report.checks, 'clock')).toMatchObject({ status: 'fail' });
      expect(byId(report.checks, 'clock').detail).toMatch(/ahead of the server/);
    } finally {
      skewed.close();
    }
  });

  it('ends the reachability check at its deadline when the server sends its head, then trickles bytes', async () => {
    let arrived: () => void;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    const clock = new FakeClock();
    const started = clock.now();
    /** The run's time when the request was torn down. */
    let closedAt: number | undefined;
    const timers = new Set<NodeJS.Timeout>();
    let written = 0;
    const trickling: Server = createServer((_req, res) => {
      arrived();
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': '100000' });
      res.write('<');
      // Bytes keep coming, so only a deadline on the whole check ends it, not one on a quiet connection.
      const timer = setInterval(() => res.write('x', () => written++), 50);
      timers.add(timer);
      res.on('close', () => {
        clearInterval(timer);
        closedAt = clock.now();
      });
    });
    await new Promise<void>((resolve) => trickling.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(trickling.address() as AddressInfo).port}`;
    try {
      const run = runCommand(['doctor', '--json'], { env: env({ IDCLI_BASE_URL: base }), clock });
      await requestArrived;
      // The deadline counts from the check's start, before the request arrived: bytes arriving while the run's
      // clock moves towards it do not put it off, and nothing ends the check before it (not the 300 s of
      // IDCLI_HTTP_TIMEOUT, which bounded it once).
      for (const step of [2000, 2000, 999]) {
        const seen = written;
        await until(() => (written >= seen + 2 ? true : undefined), 10_000, 'more bytes to trickle');
        clock.advance(step);
      }
      clock.advance(1);
      // The request was torn down at the deadline, not before and not left to trickle on.
      expect((await until(() => closedAt, 10_000, 'the request to be torn down')) - started).toBe(5000);
      const { code, stdout } = await run;
      const report = JSON.parse(stdout) as { checks: Check[] };
      expect(code).toBe(2);
      const reach = byId(report.checks, 'reachable');
      expect(reach.status).toBe('fail');
      expect(reach.detail).toBe(
        `${base}/oauth/authorize: no complete answer within 5 s, the most doctor waits for one check`,
      );
    } finally {
      for (const t of timers) clearInterval(t);
      trickling.closeAllConnections();
      trickling.close();
    }
  });

  it('shows proxy variables in effect without their credentials', async () => {
    const { report } = await doctorJson(
      env({ HTTPS_PROXY: 'http://user:pw@proxy.example:3128', NO_PROXY: '127.0.0.1' }),
    );
    const proxy = byId(report.checks, 'proxy');
    expect(proxy.detail).toContain('proxy.example:3128');
    expect(proxy.detail).toContain('NO_PROXY=127.0.0.1');
    expect(proxy.detail).not.toContain('pw');
  });

  it('demanding the keychain where none is reachable fails the store check', async () => {
    const { code, report } = await doctorJson(
      env({ IDCLI_CREDENTIAL_STORE: 'keychain', DBUS_SESSION_BUS_ADDRESS: `unix:path=${dir.path}/no-such-bus` }),
    );
    expect(code).toBe(2);
    expect(byId(report.checks, 'store')).toMatchObject({ status: 'fail' });
  });
});

/**
 * Who may use the shared sign-in: a real etcd cluster with its own authentication (a root user, a user whose role has
 * readwrite on the prefix alone, one whose role has another prefix), and one whose members speak TLS and ask for a
 * client certificate (--client-cert-auth), made for the test with openssl.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EtcdCluster, etcdMachine, startEtcdCluster } from '../support/etcd-cluster.js';
import { harnessFor } from '../support/etcd-fleet.js';
import { type Harness, login, refreshGrants } from '../support/harness.js';

const ROOT = 'root:root-pw-0f3a';
const CI_PASSWORD = 'ci-pw-7d21c9';
const WRONG_PASSWORD = 'not-the-pw-5e8b44';
const OTHER_PASSWORD = 'other-pw-a9c310';

/** Machine i of the fleet: its own HOME and config directory, the etcd store on `prefix`. */
function machine(hh: Harness, c: EtcdCluster, i: number, prefix: string, extra: Record<string, string> = {}) {
  return etcdMachine(join(hh.dir, `machine-${i}`), c, prefix, extra);
}

const AUTH_PREFIX = '/fleet-auth/';

/** The users and roles, then authentication on: as an administrator would set it up with etcdctl. */
function enableAuth(c: EtcdCluster): EtcdCluster {
  const ctl = (...args: string[]) => c.ctl(args);
  ctl('user', 'add', ROOT, '--interactive=false');
  ctl('user', 'add', `ci:${CI_PASSWORD}`, '--interactive=false');
  ctl('role', 'add', 'idcli-fleet');
  ctl('role', 'grant-permission', '--prefix=true', 'idcli-fleet', 'readwrite', AUTH_PREFIX);
  ctl('user', 'grant-role', 'ci', 'idcli-fleet');
  ctl('user', 'add', `other:${OTHER_PASSWORD}`, '--interactive=false');
  ctl('role', 'add', 'elsewhere');
  ctl('role', 'grant-permission', '--prefix=true', 'elsewhere', 'readwrite', '/elsewhere/');
  ctl('user', 'grant-role', 'other', 'elsewhere');
  ctl('auth', 'enable');
  return c;
}

// Both clusters start at once; in each block the tests, each with its own emulator, run at the same time.
let withAuth: EtcdCluster | undefined;
let withTls: EtcdCluster | undefined;
beforeAll(async () => {
  const [auth, tls] = await Promise.allSettled([startEtcdCluster().then(enableAuth), startEtcdCluster({ tls: true })]);
  if (auth.status === 'fulfilled') withAuth = auth.value;
  if (tls.status === 'fulfilled') withTls = tls.value;
  for (const r of [auth, tls]) if (r.status === 'rejected') throw r.reason;
}, 90_000);
afterAll(async () => {
  await Promise.all([withAuth?.close(), withTls?.close()]);
});

describe.concurrent('etcd with authentication enabled', () => {
  const prefix = AUTH_PREFIX;

  it('a user whose role has readwrite on the prefix signs in, reads and refreshes', async (t) => {
    const h = await harnessFor(t);
    const as = (i: number) => machine(h, withAuth!, i, prefix, { IDCLI_ETCD_USER: `ci:${CI_PASSWORD}` });
    await login(h, [], as(0), 'command');
    const cached = await h.command(['token'], as(1));
    expect(cached.code, cached.stderr).toBe(0);
    const refreshed = await h.command(['token', '--refresh', '--verbose'], as(2));
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect(refreshGrants(h)).toHaveLength(1);
    expect(refreshed.stdout).not.toBe(cached.stdout);
    for (const r of [cached, refreshed]) expect(r.stderr).not.toContain(CI_PASSWORD);
    // etcdctl as root sees the record under the prefix.
    expect(withAuth!.ctl(['--user', ROOT, 'get', '--prefix', '--keys-only', prefix])).toContain(prefix);
  }, 60_000);

  it('a wrong password is exit 2 naming the endpoint, the password never shown (--verbose too)', async (t) => {
    const h = await harnessFor(t);
    for (const args of [['token'], ['token', '--verbose'], ['token', '--refresh', '--verbose']]) {
      const r = await h.command(args, machine(h, withAuth!, 0, prefix, { IDCLI_ETCD_USER: `ci:${WRONG_PASSWORD}` }));
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('refused the user and password of IDCLI_ETCD_USER');
      expect(r.stderr).toMatch(new RegExp(withAuth!.members.map((m) => m.clientUrl.replace(/\./g, '\\.')).join('|')));
      expect(r.stderr).not.toContain(WRONG_PASSWORD);
      expect(r.stderr).not.toMatch(/^\s+at /m);
    }
    expect(refreshGrants(h)).toHaveLength(0);
  }, 60_000);

  it('a user whose role lacks the prefix is exit 2 naming the endpoint and the user', async (t) => {
    const h = await harnessFor(t);
    const r = await h.command(
      ['token', '--verbose'],
      machine(h, withAuth!, 0, prefix, { IDCLI_ETCD_USER: `other:${OTHER_PASSWORD}` }),
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('denied the etcd user other access under the key prefix');
    expect(r.stderr).toMatch(new RegExp(withAuth!.members.map((m) => m.clientUrl.replace(/\./g, '\\.')).join('|')));
    expect(r.stderr).not.toContain(OTHER_PASSWORD);
  }, 60_000);

  it('doctor: a refused user fails the members and permissions checks, the password never shown', async (t) => {
    const h = await harnessFor(t);
    const run = (user: string) =>
      h.command(['doctor', '--json', '--verbose'], machine(h, withAuth!, 0, prefix, { IDCLI_ETCD_USER: user }));
    const refused = await run(`ci:${WRONG_PASSWORD}`);
    expect(refused.code, refused.stderr).toBe(2);
    const checks = new Map(
      (JSON.parse(refused.stdout) as { checks: { id: string; status: string; detail: string }[] }).checks.map((x) => [
        x.id,
        x,
      ]),
    );
    expect(checks.get('etcd-members')?.status).toBe('fail');
    expect(checks.get('etcd-members')?.detail).toContain('refused the user and password of IDCLI_ETCD_USER');
    expect(checks.get('etcd-access')?.status).toBe('fail');
    expect(refused.stdout + refused.stderr).not.toContain(WRONG_PASSWORD);

    const denied = await run(`other:${OTHER_PASSWORD}`);
    const access = (
      JSON.parse(denied.stdout) as { checks: { id: string; status: string; detail: string }[] }
    ).checks.find((x) => x.id === 'etcd-access');
    expect(access?.status).toBe('fail');
    expect(access?.detail).toContain('denied the etcd user other access');
    expect(denied.stdout + denied.stderr).not.toContain(OTHER_PASSWORD);

    const allowed = await run(`ci:${CI_PASSWORD}`);
    const ok = (JSON.parse(allowed.stdout) as { checks: { id: string; status: string }[] }).checks;
    expect(ok.filter((x) => x.id.startsWith('etcd-')).map((x) => x.status)).toEqual(['pass', 'pass', 'pass', 'pass']);
    expect(allowed.stdout + allowed.stderr).not.toContain(CI_PASSWORD);
  }, 60_000);

  it('no IDCLI_ETCD_USER at all is exit 2 naming IDCLI_ETCD_USER', async (t) => {
    const h = await harnessFor(t);
    const r = await h.command(['token'], machine(h, withAuth!, 0, prefix));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('IDCLI_ETCD_USER');
  }, 60_000);
});

describe.concurrent('etcd members speaking TLS with client certificates', () => {
  it('IDCLI_ETCD_CACERT, _CERT and _KEY: sign-in, cached token and refresh work over https', async (t) => {
    const h = await harnessFor(t);
    const tls = withTls!.tls!;
    const files = { IDCLI_ETCD_CACERT: tls.ca, IDCLI_ETCD_CERT: tls.clientCert, IDCLI_ETCD_KEY: tls.clientKey };
    expect(withTls!.endpoints).toMatch(/^https:\/\//);
    await login(h, [], machine(h, withTls!, 0, '/fleet-tls/', files), 'command');
    const cached = await h.command(['token'], machine(h, withTls!, 1, '/fleet-tls/', files));
    expect(cached.code, cached.stderr).toBe(0);
    const refreshed = await h.command(['token', '--refresh'], machine(h, withTls!, 2, '/fleet-tls/', files));
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect(refreshGrants(h)).toHaveLength(1);
  }, 60_000);

  it('without IDCLI_ETCD_CACERT, the members are verified against the trust store (NODE_EXTRA_CA_CERTS here)', async (t) => {
    const h = await harnessFor(t);
    const tls = withTls!.tls!;
    const env = { NODE_EXTRA_CA_CERTS: tls.ca, IDCLI_ETCD_CERT: tls.clientCert, IDCLI_ETCD_KEY: tls.clientKey };
    await login(h, [], machine(h, withTls!, 0, '/fleet-tls-store/', env), 'command');
    const cached = await h.command(['token'], machine(h, withTls!, 1, '/fleet-tls-store/', env));
    expect(cached.code, cached.stderr).toBe(0);
  }, 60_000);

  it('without the client certificate: a clear failure naming the members, at once', async (t) => {
    const h = await harnessFor(t);
    const env = machine(h, withTls!, 0, '/fleet-tls/', { IDCLI_ETCD_CACERT: withTls!.tls!.ca });
    const r = await h.command(['token'], env);
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain(withTls!.members[0]!.clientUrl);
    expect(r.stderr).toMatch(/certificate/i);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    // At once: one pass over the members, each asked once, instead of asking again until the call's patience ends.
    const verbose = await h.command(['token', '--verbose'], env);
    expect(verbose.code, verbose.stderr).toBe(4);
    const asked = verbose.stderr
      .split('\n')
      .flatMap((l) => /etcd (\S+): .*; trying the next member$/.exec(l)?.[1] ?? []);
    expect(asked.sort()).toEqual(withTls!.members.map((m) => m.clientUrl).sort());
  }, 60_000);

  it('without the CA: the members certificate is refused, naming its issuer', async (t) => {
    const h = await harnessFor(t);
    const tls = withTls!.tls!;
    const r = await h.command(
      ['token'],
      machine(h, withTls!, 0, '/fleet-tls/', { IDCLI_ETCD_CERT: tls.clientCert, IDCLI_ETCD_KEY: tls.clientKey }),
    );
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toContain('idcli test etcd CA');
    expect(r.stderr).toContain('IDCLI_ETCD_CACERT');
  }, 60_000);
});

describe.concurrent('endpoints', () => {
  it('a non-loopback http:// endpoint is exit 2 before any request', async (t) => {
    const h = await harnessFor(t);
    const r = await h.command(['token'], {
      IDCLI_CREDENTIAL_STORE: 'etcd',
      IDCLI_ETCD_ENDPOINTS: 'https://127.0.0.1:1,http://192.0.2.10:2379',
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('http://192.0.2.10:2379');
    expect(r.stderr).toContain('must use https');
  });

  it('a unix:// endpoint is named as given', async (t) => {
    const h = await harnessFor(t);
    const r = await h.command(['token'], {
      IDCLI_CREDENTIAL_STORE: 'etcd',
      IDCLI_ETCD_ENDPOINTS: 'unix:///run/etcd.sock',
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('unix:///run/etcd.sock');
    expect(r.stderr).not.toContain("'null'");
  });
});

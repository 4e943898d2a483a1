// Needs a process: the system's store is a bundle bound in a private mount namespace, and Node reads
// SSL_CERT_FILE from its own process's environment; the single executable runs this file too.
/**
 * A company network that inspects TLS, played by a real mitmproxy (test/support/mitmproxy.ts) in front of the emulator
 * over HTTPS, with the BUILT CLI (and the single executable under IDCLI_TEST_EXE: .ci/run lists this file):
 *
 *   - its CA not trusted: exit 4, one line naming the certificate mitmproxy showed and its issuer, and the ways to
 *     trust it, with no runtime's advice about flags;
 *   - its CA installed in the operating system's store (a copy of the system's bundle with the CA appended, bound
 *     over /etc/ssl/certs/ca-certificates.crt in a private mount namespace, so the machine's own is never changed),
 *     or named by SSL_CERT_FILE: sign-in (the token exchange), a refresh, `list -o` and `api` all work, through it.
 *
 * The emulator's own CA stays in NODE_EXTRA_CA_CERTS for the HTTP "browser", which goes to it directly; idcli goes
 * through mitmproxy and is shown mitmproxy's certificates only.
 */
import { copyFileSync, appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, harness } from '../support/harness.js';
import { expectOneErrorLine } from '../support/cli.js';
import { type Mitmproxy, startMitmproxy } from '../support/mitmproxy.js';

const SYSTEM_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
const ITEMS = Array.from({ length: 7 }, (_, i) => ({ id: `u${i}` }));

let mitm: Mitmproxy;
let h: Harness;

beforeAll(async () => {
  h = await harness({ scheme: 'https' });
  h.emu.setCollection('/v1/items', {
    type: 'offset',
    items: ITEMS.map((i) => JSON.stringify(i)),
    linkStyle: 'relative',
  });
  h.emu.setResource('/v1/users/42', JSON.stringify({ id: '42', name: 'Ada' }));
  const upstreamCa = h.env().NODE_EXTRA_CA_CERTS!;
  mitm = await startMitmproxy(upstreamCa);
}, 60_000);

afterAll(async () => {
  await mitm?.close();
  await h?.close();
});

afterEach(() => {
  h.emu.requests.length = 0;
});

/** Through mitmproxy, for every request idcli makes; the API on the same emulator. */
const viaMitm = (extra: Record<string, string | undefined> = {}) => ({
  HTTPS_PROXY: mitm.url,
  IDCLI_API_BASE_URL: `${h.emu.baseUrl}/v1`,
  ...extra,
});

describe('an intercepting proxy whose CA is not trusted', () => {
  it('fails with exit 4, naming the certificate it was shown and who issued it, in one line', async () => {
    const r = await h.run(['api', 'users/42'], viaMitm({ IDCLI_ACCESS_TOKEN: h.emu.mintTokens().access_token }));
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout).toBe('');
    expectOneErrorLine(
      r,
      /^error: GET https:\/\/127\.0\.0\.1:\d+\/v1\/users\/42 failed: the server's TLS certificate is not trusted \([^)]+\): "[^"]+" issued by "CN=mitmproxy, O=mitmproxy"; .*system's CA store.*SSL_CERT_FILE or NODE_EXTRA_CA_CERTS/,
    );
    expect(r.stderr).not.toMatch(/use-system-ca|Node\.js/);
    // Nothing was passed on: mitmproxy never saw a request it could forward.
    expect(h.emu.requests.filter((q) => q.path.startsWith('/v1/users'))).toEqual([]);
  });

  it('the sign-in fails the same way at its token exchange', async () => {
    const r = await h.run(['login', '--timeout', '30'], viaMitm());
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toMatch(
      /POST https:\/\/127\.0\.0\.1:\d+\/oauth\/token failed: .*issued by "CN=mitmproxy, O=mitmproxy"/,
    );
    expect(r.stderr).not.toMatch(/use-system-ca/);
  });

  it('doctor names mitmproxy as the issuer, likely TLS inspection, trusted by no store, with the fix', async () => {
    const r = await h.run(['doctor', '--json'], viaMitm());
    const checks = doctorChecks(r.stdout);
    for (const id of ['tls', 'api-tls']) {
      expect(checks[id]).toMatchObject({
        status: 'fail',
        detail: expect.stringMatching(/issued by "CN=mitmproxy, O=mitmproxy".*likely TLS inspection/),
        fix: expect.stringMatching(/system's CA store.*SSL_CERT_FILE or NODE_EXTRA_CA_CERTS/),
        certificate: { issuer: 'CN=mitmproxy, O=mitmproxy', ca: 'CN=mitmproxy, O=mitmproxy', publicRoot: false },
      });
      expect(checks[id]!.certificate).not.toHaveProperty('trustedBy');
    }
  });
});

/** doctor --json's checks by id. */
function doctorChecks(stdout: string): Record<string, Record<string, unknown> & { certificate?: object }> {
  const { checks } = JSON.parse(stdout) as { checks: { id: string }[] };
  return Object.fromEntries(checks.map((c) => [c.id, c]));
}

interface Trust {
  name: string;
  /** How doctor names the store the CA is trusted from. */
  store: string;
  env: () => Record<string, string>;
  prefix: () => string[] | undefined;
}

let bundle: string;
const ways: Trust[] = [
  {
    name: "installed in the system's store",
    store: "the system's CA store",
    env: () => ({}),
    // A private mount namespace: the bundle seen at the system's path is a copy with mitmproxy's CA appended.
    prefix: () => [
      'unshare',
      '-m',
      '--propagation',
      'private',
      'sh',
      '-c',
      `mount --bind "$0" ${SYSTEM_BUNDLE} && exec "$@"`,
      bundle,
    ],
  },
  {
    name: 'named by SSL_CERT_FILE',
    store: 'SSL_CERT_FILE',
    env: () => ({ SSL_CERT_FILE: mitm.caFile }),
    prefix: () => undefined,
  },
];

beforeAll(() => {
  bundle = join(h.dir, 'ca-certificates.crt');
  copyFileSync(SYSTEM_BUNDLE, bundle);
  appendFileSync(bundle, `\n${readFileSync(mitm.caFile, 'utf8')}`);
});

describe.each(ways)('an intercepting proxy whose CA is $name', (way) => {
  const run = (args: string[], extra: Record<string, string | undefined> = {}) => {
    const prefix = way.prefix();
    return h.run(args, viaMitm({ ...way.env(), ...extra }), prefix ? { prefix } : {});
  };

  it('sign-in, refresh, list -o and api all work through it', async () => {
    const seen = mitm.log().length;
    const signIn = await run(['login', '--timeout', '30']);
    expect(signIn.stderr).toContain('Signed in');
    expect(signIn.code, signIn.stderr).toBe(0);

    const record = await h.record();
    await h.writeRecord({ ...record!, expiresAt: Date.now() - 60_000 });
    const events = h.emu.tokenEvents.length;
    const refreshed = await run(['token']);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect(h.emu.tokenEvents.slice(events)).toMatchObject([{ grant: 'refresh_token', ok: true }]);

    const out = join(h.dir, `items-${way.prefix() ? 'os' : 'file'}.ndjson`);
    const listed = await run(['list', '/v1/items', '--page-size', '3', '-o', out]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(ITEMS.map((i) => `${JSON.stringify(i)}\n`).join(''));

    const api = await run(['api', 'users/42']);
    expect(api.code, api.stderr).toBe(0);
    expect(JSON.parse(api.stdout)).toEqual({ id: '42', name: 'Ada' });

    // Every one of them went through mitmproxy, which decrypted it.
    const flows = mitm.log().slice(seen);
    for (const flow of ['POST https://127.0.0.1', '/oauth/token', 'GET https://127.0.0.1', '/v1/items', '/v1/users/42'])
      expect(flows).toContain(flow);
  });

  it('doctor says mitmproxy issued what it was shown, likely TLS inspection, and which store trusts it', async () => {
    const r = await run(['doctor', '--json']);
    const checks = doctorChecks(r.stdout);
    for (const id of ['tls', 'api-tls']) {
      expect(checks[id], r.stdout).toMatchObject({
        status: 'pass',
        detail: expect.stringMatching(/issued by "CN=mitmproxy, O=mitmproxy", trusted through .*likely TLS inspection/),
        certificate: { issuer: 'CN=mitmproxy, O=mitmproxy', trustedBy: way.store, publicRoot: false },
      });
    }
  });
});

it('doctor, directly to the emulator, says its CA is trusted through NODE_EXTRA_CA_CERTS', async () => {
  const r = await h.run(['doctor', '--json'], { IDCLI_API_BASE_URL: `${h.emu.baseUrl}/v1` });
  expect(doctorChecks(r.stdout).tls).toMatchObject({
    status: 'pass',
    certificate: {
      issuer: 'CN=idcli test CA',
      ca: 'CN=idcli test CA',
      trustedBy: 'NODE_EXTRA_CA_CERTS',
      publicRoot: false,
    },
  });
});

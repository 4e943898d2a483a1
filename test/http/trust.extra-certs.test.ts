/**
 * NODE_EXTRA_CA_CERTS, each command run in process: a throwaway CA signs a certificate for 127.0.0.1, an HTTPS front on
 * loopback serves the emulator with it, and idcli must trust it exactly when NODE_EXTRA_CA_CERTS names the CA,
 * on each way a request can leave: the direct transport (no proxy variable), undici direct (a proxy variable,
 * bypassed by NO_PROXY) and undici through a CONNECT tunnel. Without the CA: exit 4, a one-line TLS message naming the
 * certificate's issuer, no stack trace.
 * Then the other TLS faults: a certificate for another name, an expired one, a stalled handshake, plain HTTP.
 */
import { type AddressInfo, createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UntrustedCertificate } from '../../src/http/network-errors.js';
import { startEmulator } from '../emulator/index.js';
import { useTlsFront } from '../support/ca-files.js';
import { plainItems } from '../support/list.js';
import { baseEnv, type CliResult, tempDir } from '../support/cli.js';
import { FakeClock } from '../support/clock.js';
import { type CommandOptions, runCommand } from '../support/run-command.js';
import { storeExpiredSignIn } from '../support/sign-in.js';
import { type ForwardProxy, STACK_FRAME, startForwardProxy } from '../support/proxy.js';

const ITEMS = plainItems(95);
const fronted = useTlsFront(ITEMS);
let proxy: ForwardProxy;

beforeAll(async () => {
  proxy = await startForwardProxy();
});

afterAll(async () => {
  await proxy?.close();
});

beforeEach(() => {
  proxy.hits.length = 0;
  fronted.front.hits.length = 0;
});

interface Way {
  name: string;
  env: () => Record<string, string>;
  /** What the forward proxy must have seen, given how many connections were made. */
  tunnelled: boolean;
}

const ways: Way[] = [
  { name: 'direct TLS (no proxy variable)', env: () => ({}), tunnelled: false },
  {
    name: 'undici, direct (NO_PROXY)',
    env: () => ({ HTTPS_PROXY: proxy.url, NO_PROXY: '127.0.0.1' }),
    tunnelled: false,
  },
  { name: 'undici, through a CONNECT tunnel', env: () => ({ HTTPS_PROXY: proxy.url }), tunnelled: true },
];

function run(args: string[], configDir: string, extra: Record<string, string | undefined>): Promise<CliResult> {
  return runCommand(args, {
    env: baseEnv({
      IDCLI_BASE_URL: fronted.front.url,
      IDCLI_CLIENT_ID: fronted.emu.client.id,
      IDCLI_CLIENT_NAME: fronted.emu.client.name,
      IDCLI_REDIRECT_URI: fronted.emu.client.callbackUrl,
      IDCLI_CONFIG_DIR: configDir,
      IDCLI_CREDENTIAL_STORE: 'file',
      ...extra,
    }),
  });
}

function expectTlsRefusal(r: CliResult, request: string): void {
  expect(r.code).toBe(4);
  expect(r.stdout).toBe('');
  expect(r.stderr).not.toMatch(STACK_FRAME);
  const lines = r.stderr.split('\n').filter(Boolean);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(
    new RegExp(
      `^error: ${request} failed: the server's TLS certificate is not trusted \\([^)]+\\): "CN=[^"]+" issued by "CN=idcli test CA"; .*add it to the system's CA store .*, or name its PEM file in SSL_CERT_FILE or NODE_EXTRA_CA_CERTS$`,
    ),
  );
}

describe.each(ways)('HTTPS with a private CA, $name', (way) => {
  it('with NODE_EXTRA_CA_CERTS: list and a token refresh work', async () => {
    const cfg = await tempDir('idcli-tls-cfg-');
    try {
      const l = await run(['list', '/v1/items', '--page-size', '30'], cfg.path, {
        ...way.env(),
        NODE_EXTRA_CA_CERTS: fronted.pki.caFile,
        IDCLI_ACCESS_TOKEN: fronted.emu.mintTokens().access_token,
      });
      expect(l.stderr).toBe('');
      expect(l.code).toBe(0);
      expect(l.stdout).toBe(ITEMS.map((i) => `${i}\n`).join(''));
      expect(fronted.front.hits.filter((h) => h.startsWith('GET /v1/items'))).toHaveLength(4);

      await storeExpiredSignIn({ emu: fronted.emu, configDir: cfg.path, baseUrl: fronted.front.url });
      const t = await run(['token'], cfg.path, { ...way.env(), NODE_EXTRA_CA_CERTS: fronted.pki.caFile });
      expect(t.stderr).toBe('');
      expect(t.code).toBe(0);
      expect(fronted.front.hits).toContain('POST /oauth/token');

      if (way.tunnelled) {
        expect(proxy.hits.length).toBeGreaterThan(0);
        expect(new Set(proxy.hits.map((h) => `${h.method} ${h.target}`))).toEqual(
          new Set([`CONNECT 127.0.0.1:${fronted.front.port}`]),
        );
      } else {
        expect(proxy.hits).toEqual([]);
      }
    } finally {
      await cfg.cleanup();
    }
  });

  it('without it: exit 4 with a clear TLS message and no stack trace, for a GET and for the token POST', async () => {
    const cfg = await tempDir('idcli-tls-cfg-');
    try {
      const l = await run(['list', '/v1/items'], cfg.path, {
        ...way.env(),
        IDCLI_ACCESS_TOKEN: fronted.emu.mintTokens().access_token,
      });
      expectTlsRefusal(l, `GET ${fronted.front.url}/v1/items\\S*`);

      await storeExpiredSignIn({ emu: fronted.emu, configDir: cfg.path, baseUrl: fronted.front.url });
      const t = await run(['token'], cfg.path, way.env());
      expectTlsRefusal(t, `POST ${fronted.front.url}/oauth/token`);
      // Nothing got past the handshake, and an untrusted certificate is not retried: each request made one tunnel,
      // and the look at the certificate it was refused another.
      expect(fronted.front.hits).toEqual([]);
      if (way.tunnelled) expect(proxy.hits.map((h) => h.method)).toEqual(['CONNECT', 'CONNECT', 'CONNECT', 'CONNECT']);
    } finally {
      await cfg.cleanup();
    }
  });
});

/**
 * Faults of the TLS layer, each answered once with exit 4 and one line naming it: the emulator itself serves HTTPS
 * with a certificate for another name or an expired one, and two raw TCP servers play a handshake that never
 * completes and a plain-HTTP server on the port idcli was told speaks TLS.
 */
describe('TLS faults: exit 4, one clear line', () => {
  function expectOneLine(r: CliResult, pattern: RegExp): void {
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toMatch(STACK_FRAME);
    const lines = r.stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
  }

  async function listAt(
    baseUrl: string,
    extra: Record<string, string> = {},
    opts: Omit<CommandOptions, 'env'> = {},
  ): Promise<CliResult> {
    const cfg = await tempDir('idcli-tls-cfg-');
    try {
      return await runCommand(['list', '/v1/items', '--max-retries', '0'], {
        ...opts,
        env: baseEnv({
          IDCLI_BASE_URL: baseUrl,
          IDCLI_CONFIG_DIR: cfg.path,
          IDCLI_CREDENTIAL_STORE: 'file',
          IDCLI_ACCESS_TOKEN: 'not-used',
          NODE_EXTRA_CA_CERTS: fronted.pki.caFile,
          ...extra,
        }),
      });
    } finally {
      await cfg.cleanup();
    }
  }

  it.each([
    {
      fault: 'a certificate for another name',
      cert: () => fronted.pki.issue('elsewhere', { names: ['DNS:elsewhere.example'], days: 2 }),
      message: /the server's TLS certificate is not issued for this host name/,
    },
    {
      fault: 'an expired certificate',
      cert: () => fronted.pki.issue('expired', { names: ['IP:127.0.0.1'], days: -1 }),
      message: /the server's TLS certificate has expired/,
    },
  ])('$fault', async ({ cert, message }) => {
    const bad = await startEmulator({ tls: cert() });
    try {
      const r = await listAt(bad.baseUrl);
      expectOneLine(r, new RegExp(`^error: GET ${bad.baseUrl}/v1/items\\S* failed: ${message.source}`));
      expect(bad.requests).toEqual([]);
      expect(bad.connections().tls).toBe(0);
    } finally {
      await bad.close();
    }
  });

  it('a handshake that stalls: the exchange ends at IDCLI_HTTP_TIMEOUT', async () => {
    const hello = new Promise<void>((resolve) => {
      silent.once('connection', (s: Socket) => s.once('data', () => resolve()));
    });
    // The run's clock moves only once the ClientHello has arrived and gone unanswered.
    const clock = new FakeClock();
    const run = listAt(`https://127.0.0.1:${port(silent)}`, { IDCLI_HTTP_TIMEOUT: '1' }, { clock });
    await hello;
    await clock.elapse(1000, 'the 1 s deadline of the exchange');
    expectOneLine(await run, /failed: no complete response within 1 s \(IDCLI_HTTP_TIMEOUT/);
  });

  it('a plain-HTTP answer on the TLS port', async () => {
    const r = await listAt(`https://127.0.0.1:${port(plain)}`);
    expectOneLine(r, /failed: the server did not answer in TLS \(the port may serve plain http:\/\/\)$/);
  });
});

let silent: NetServer;
let plain: NetServer;

beforeAll(async () => {
  // Reads the ClientHello and never answers.
  silent = createNetServer((s) => s.on('error', () => {}));
  // Answers whatever arrives with a plain HTTP response, as a server without TLS on that port does.
  plain = createNetServer((s) => {
    s.on('error', () => {});
    s.once('data', () => s.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'));
  });
  for (const s of [silent, plain]) await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
});

afterAll(async () => {
  for (const s of [silent, plain]) {
    s?.close();
  }
});

function port(s: NetServer): number {
  return (s.address() as AddressInfo).port;
}

/**
 * Over HTTPS on a link that charges every round trip, each connection costs a TCP and a TLS handshake: the walk
 * opens no more connections than it has pages in flight, one at --concurrency 1, and reuses them (resumed TLS
 * sessions for the ones after the first), at every window.
 */
/** The pages in flight `list --concurrency auto` starts with. */
const AUTO_START = 4;

describe('connections of a walk over HTTPS', () => {
  it.each([
    { window: '--concurrency 1', args: ['--concurrency', '1'] },
    { window: '--concurrency 3', args: ['--concurrency', '3'] },
    { window: '--concurrency auto', args: [] },
  ])('$window: every record, over no more connections than pages in flight', async ({ args }) => {
    const records = await startEmulator({
      tls: fronted.pki,
      recordItems: 5000,
      link: { latencyMs: 30, bandwidthMbps: 100, roundTrip: true },
    });
    const cfg = await tempDir('idcli-tls-cfg-');
    try {
      const r = await runCommand(['list', '/v1/records', '--page-size', '250', '--verbose', ...args], {
        env: baseEnv({
          IDCLI_BASE_URL: records.baseUrl,
          IDCLI_CONFIG_DIR: cfg.path,
          IDCLI_CREDENTIAL_STORE: 'file',
          IDCLI_ACCESS_TOKEN: records.mintTokens().access_token,
          NODE_EXTRA_CA_CERTS: fronted.pki.caFile,
        }),
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.split('\n').length - 1).toBe(5000);
      // The window's size as --verbose reports its changes, from the 4 that auto starts with (`list --help`); a
      // window that only shrank on a slow machine reports none above it. A fixed --concurrency is the window.
      const sizes = [...r.stderr.matchAll(/(\d+) pages in flight/g)].map((m) => Number(m[1]));
      const window = args.length > 0 ? Number(args[1]) : Math.max(AUTO_START, ...sizes);
      expect(window).toBeGreaterThanOrEqual(1);
      const { tcp, tls, resumed } = records.connections();
      expect(tcp).toBeGreaterThanOrEqual(1);
      expect(tcp).toBeLessThanOrEqual(window);
      expect(tls).toBe(tcp);
      expect(resumed).toBe(tls - 1);
    } finally {
      await cfg.cleanup();
      await records.close();
    }
  });
});

describe('the untrusted-certificate message', () => {
  const message = (subject: string, issuer: string) =>
    new UntrustedCertificate('self-signed certificate', 'DEPTH_ZERO_SELF_SIGNED_CERT', undefined, { subject, issuer })
      .message;

  it("escapes control characters JSON-style, OpenSSL's \\XX ones too, and bidi controls", () => {
    const m = message('CN=a\\0Ab\\1B[2J, O=x\\\\0A', 'CN=\u202emoc.elgoog\u202c\r');
    expect(m).toContain('"CN=a\\nb\\u001b[2J, O=x\\\\0A" issued by "CN=\\u202emoc.elgoog\\u202c\\r"');
    expect(m).not.toMatch(/[\u0000-\u001f\u202a-\u202e]/);
  });

  it('clips each long name in its middle, so the message stays one short line', () => {
    const m = message(`CN=${'s'.repeat(5000)}end`, `CN=start${'i'.repeat(5000)}, O=CA`);
    expect(m.length).toBeLessThan(600);
    expect(m).toMatch(/"CN=s+…s+end" issued by "CN=starti+…i+, O=CA"/);
  });
});

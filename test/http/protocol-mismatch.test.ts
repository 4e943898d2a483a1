/**
 * A server that speaks only HTTP/2, each command run in process: over TLS (no HTTP/1.1 fallback) on each way a request can
 * leave (the direct transport, undici direct, undici through a CONNECT tunnel), and in the clear (h2c). Each is exit 4
 * with one line saying the server does not speak HTTP/1.1: not a 403 about the user's access, not a garbled response,
 * and asked once, as asking again gets the same answer.
 */
import { createSecureServer, createServer, type Http2Server, type Http2SecureServer } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseEnv, type CliResult, tempDir } from '../support/cli.js';
import { runCommand } from '../support/run-command.js';
import { type ForwardProxy, makePki, type Pki, STACK_FRAME, startForwardProxy } from '../support/proxy.js';

const NOT_HTTP1 = 'the server does not speak HTTP/1.1, the only protocol idcli speaks';

interface H2 {
  origin: string;
  /** Connections the server accepted. */
  connections: number;
  close(): Promise<void>;
}

async function listen(server: Http2Server | Http2SecureServer, scheme: string): Promise<H2> {
  const sockets = new Set<Socket>();
  const h2: H2 = { origin: '', connections: 0, close: async () => {} };
  server.on('connection', (s: Socket) => {
    h2.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  // What a request would get, were it ever read: an answer a client would take as success.
  server.on('stream', (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/json' });
    stream.end('{"items":[]}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  h2.origin = `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  h2.close = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return h2;
}

let dir: { path: string; cleanup: () => Promise<void> };
let pki: Pki;
let tls: H2;
let h2c: H2;
let proxy: ForwardProxy;

beforeAll(async () => {
  dir = await tempDir('idcli-h2-');
  pki = makePki(dir.path);
  // Without allowHTTP1, as an HTTP/2-only service is set up.
  tls = await listen(createSecureServer({ key: pki.key, cert: pki.cert }), 'https');
  h2c = await listen(createServer(), 'http');
  proxy = await startForwardProxy();
});

afterAll(async () => {
  await proxy?.close();
  await tls?.close();
  await h2c?.close();
  await dir?.cleanup();
});

function api(origin: string, extra: Record<string, string> = {}): Promise<CliResult> {
  return runCommand(['api', '/v1/users', '--api-base-url', origin], {
    env: baseEnv({
      IDCLI_CONFIG_DIR: dir.path,
      IDCLI_ACCESS_TOKEN: 'h2-probe-access-token',
      NODE_EXTRA_CA_CERTS: pki.caFile,
      ...extra,
    }),
  });
}

function expectNotHttp1(r: CliResult, how: string): void {
  expect(r.code, r.stderr).toBe(4);
  expect(r.stdout).toBe('');
  expect(r.stderr).not.toMatch(STACK_FRAME);
  // Whole words: the port in the URL may hold the digits 403.
  expect(r.stderr).not.toMatch(/\b403\b|lack access/);
  expect(r.stderr.split('\n').filter(Boolean)).toEqual([
    expect.stringMatching(new RegExp(`^error: GET \\S+/v1/users failed: ${NOT_HTTP1}: ${how}$`)),
  ]);
}

describe('a server that speaks only HTTP/2', () => {
  const refusedInTls = 'it refused HTTP/1.1 in the TLS handshake \\(a server that speaks only HTTP/2 does\\)';
  it.each([
    ['direct TLS (no proxy variable)', () => ({})],
    ['undici, direct (NO_PROXY)', () => ({ HTTPS_PROXY: proxy.url, NO_PROXY: '127.0.0.1' })],
    ['undici, through a CONNECT tunnel', () => ({ HTTPS_PROXY: proxy.url })],
  ])('over TLS, %s: exit 4, the server does not speak HTTP/1.1, not retried', async (_way, env) => {
    const before = tls.connections;
    expectNotHttp1(await api(tls.origin, env()), refusedInTls);
    expect(tls.connections - before).toBe(1);
  });

  it('in the clear (h2c): exit 4, the server answered in HTTP/2, not retried', async () => {
    const before = h2c.connections;
    expectNotHttp1(
      await api(h2c.origin),
      'it answered in HTTP/2 \\(a server that speaks only HTTP/2 in the clear, h2c\\)',
    );
    expect(h2c.connections - before).toBe(1);
  });
});

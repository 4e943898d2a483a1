/**
 * The Transport contract, held by both transports over real sockets: the plain one (no proxy variable) and the
 * undici one that a proxy variable selects, here talking through a forward proxy on loopback.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { IdcliError } from '../../src/errors.js';
import { createHttpClient, type HttpClient, request } from '../../src/http/client.js';
import { NetworkError } from '../../src/http/types.js';
import { FakeClock } from '../support/clock.js';
import { listenLoopback, unusedPort } from '../support/listen.js';
import { until } from '../support/until.js';
import { type ForwardProxy, startForwardProxy } from '../support/proxy.js';

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

interface Origin {
  url: string;
  hits: number;
  close(): Promise<void>;
}

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function origin(handler: Handler): Promise<Origin> {
  let hits = 0;
  const server: Server = createServer((req, res) => {
    hits++;
    req.resume();
    req.on('end', () => handler(req, res, hits));
  });
  const listening = await listenLoopback(server);
  const o: Origin = {
    url: `http://127.0.0.1:${listening.port}`,
    get hits() {
      return hits;
    },
    close: listening.close,
  };
  cleanups.push(() => o.close());
  return o;
}

async function proxy(opts: Parameters<typeof startForwardProxy>[0] = {}): Promise<ForwardProxy> {
  const p = await startForwardProxy(opts);
  cleanups.push(() => p.close());
  return p;
}

function client(env: Record<string, string>, extra: Parameters<typeof createHttpClient>[0] = {}): HttpClient {
  const c = createHttpClient({ env, random: () => 0, ...extra });
  cleanups.push(() => c.close());
  return c;
}

const fast = { baseDelayMs: 1, maxDelayMs: 5 };

interface Route {
  name: string;
  /** The client's environment, and the proxy's log when there is one. */
  setup(): Promise<{ env: Record<string, string>; proxied: () => number }>;
}

const routes: Route[] = [
  { name: 'direct (HTTP/1.1 transport)', setup: async () => ({ env: {}, proxied: () => 0 }) },
  {
    name: 'through HTTP_PROXY (undici)',
    setup: async () => {
      const p = await proxy();
      return { env: { HTTP_PROXY: p.url }, proxied: () => p.hits.length };
    },
  },
];

describe.each(routes)('transport contract, $name', (route) => {
  it('returns status, lower-case headers and the body bytes', async () => {
    const { env, proxied } = await route.setup();
    const s = await origin((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'X-Thing': 'a' });
      res.end('{"ok":true}');
    });
    const c = client(env);
    for (let i = 0; i < 3; i++) {
      const res = await c.request({ method: 'GET', url: `${s.url}/x?i=${i}` });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.headers['x-thing']).toBe('a');
      expect(Buffer.isBuffer(res.body)).toBe(true);
      expect(res.body.toString()).toBe('{"ok":true}');
    }
    expect(proxied()).toBe(env.HTTP_PROXY ? 3 : 0);
  });

  it('sends method, headers and body', async () => {
    const { env } = await route.setup();
    const echo = await origin((req, res) => {
      res.end(
        JSON.stringify({
          method: req.method,
          auth: req.headers.authorization,
          type: req.headers['content-type'],
          len: req.headers['content-length'],
        }),
      );
    });
    const res = await request({
      method: 'POST',
      url: `${echo.url}/t`,
      headers: { authorization: 'Bearer abc', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1&b=2',
      env,
    });
    expect(JSON.parse(res.body.toString())).toEqual({
      method: 'POST',
      auth: 'Bearer abc',
      type: 'application/x-www-form-urlencoded',
      len: '7',
    });
  });

  it('never follows a redirect', async () => {
    const { env } = await route.setup();
    const other = await origin((_req, res) => res.end('leaked'));
    const s = await origin((_req, res) => {
      res.writeHead(302, { location: `${other.url}/steal` });
      res.end();
    });
    const res = await client(env).requestWithRetry({ method: 'GET', url: `${s.url}/x` }, fast);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`${other.url}/steal`);
    expect(other.hits).toBe(0);
  });

  it('assembles a body of declared length in the buffer the caller provides', async () => {
    const { env } = await route.setup();
    const payload = Buffer.alloc(200_000, 'x');
    const s = await origin((_req, res) => {
      res.writeHead(200, { 'content-length': String(payload.length) });
      // The second half leaves only once the first has: the body arrives in separate pieces.
      res.write(payload.subarray(0, 100_000), () => res.end(payload.subarray(100_000)));
    });
    const pool = Buffer.alloc(300_000);
    const asked: number[] = [];
    const res = await client(env).request({
      method: 'GET',
      url: `${s.url}/big`,
      bodyBuffer: (n) => {
        asked.push(n);
        return pool;
      },
    });
    expect(res.body.equals(payload)).toBe(true);
    expect(asked).toEqual([payload.length]);
    expect(res.body.buffer).toBe(pool.buffer);
  });

  it('retries a connection dropped mid-body and never returns a truncated body', async () => {
    const { env } = await route.setup();
    const s = await origin((req, res, n) => {
      if (n === 1) {
        res.writeHead(200, { 'content-length': '100' });
        // Cut once the start of the body has left: the client holds part of it when the connection dies.
        res.write('{"items":[', () => req.socket.destroy());
      } else res.end('{"whole":true}');
    });
    const res = await client(env).requestWithRetry({ method: 'GET', url: `${s.url}/x`, timeoutMs: 10_000 }, fast);
    expect(res.body.toString()).toBe('{"whole":true}');
    expect(res.retries).toBe(1);

    const chunked = await origin((req, res) => {
      res.writeHead(200);
      res.write('{"partial":', () => req.socket.destroy());
    });
    const err = await client(env)
      .request({ method: 'GET', url: `${chunked.url}/x`, timeoutMs: 10_000 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).code).toBe('ECONNRESET');
  });

  it('times out a server that goes silent mid-body', async () => {
    const { env } = await route.setup();
    const s = await origin((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('{"items":[');
    });
    const err = await client(env)
      .request({ method: 'GET', url: `${s.url}/x`, timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).code).toBe('ETIMEDOUT');
  });

  it('times out a silent server as a network error with a code', async () => {
    const { env } = await route.setup();
    const s = await origin(() => {});
    const clock = new FakeClock();
    const started = clock.now();
    const pending = client(env, { clock })
      .request({ method: 'GET', url: `${s.url}/x`, timeoutMs: 300 })
      .catch((e: unknown) => e);
    await until(() => (s.hits > 0 ? true : undefined), 10_000, 'the request to reach the origin');
    // The first timer to fire is the request's own 300 ms, not the 30 s idle default: timeoutMs is not ignored.
    clock.advance(300);
    const err = await pending;
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).code).toBe('ETIMEDOUT');
    expect(clock.now() - started).toBe(300);
  });

  it('aborts in flight with the signal reason', async () => {
    const { env } = await route.setup();
    const ac = new AbortController();
    // Aborted once the origin holds the request, through the proxy, and never answers it.
    const s = await origin(() => ac.abort(new Error('interrupted')));
    const p = client(env).request({ method: 'GET', url: `${s.url}/x`, signal: ac.signal });
    await expect(p).rejects.toThrow('interrupted');
  });

  it('closes so that the process could exit', async () => {
    const { env } = await route.setup();
    const s = await origin((_req, res) => res.end('ok'));
    const c = createHttpClient({ env });
    await c.request({ method: 'GET', url: `${s.url}/x` });
    c.close();
    // A request after close is answered, refused or fails; it must never hang. The deadline is generous: it tells a hang from
    // an answer, not a slow answer from a quick one.
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      c.request({ method: 'GET', url: `${s.url}/x` }).then(
        () => 'answered',
        () => 'refused',
      ),
      new Promise<string>((r) => (timer = setTimeout(() => r('hung'), 20_000))),
    ]);
    clearTimeout(timer);
    expect(outcome).not.toBe('hung');
  });
});

describe('the proxy-aware transport', () => {
  it('sends the proxy credentials as Proxy-Authorization to the proxy only, never to the origin', async () => {
    const p = await proxy({ credentials: { user: 'corp user', password: 'pa:ss@word' } });
    const seen: Array<string | undefined> = [];
    const s = await origin((req, res) => {
      seen.push(req.headers['proxy-authorization']);
      res.end('ok');
    });
    const proxyUrl = `http://corp%20user:pa%3Ass%40word@127.0.0.1:${p.port}`;
    const lines: string[] = [];
    const res = await client({ http_proxy: proxyUrl }, { log: { verbose: (m) => lines.push(m) } }).request({
      method: 'GET',
      url: `${s.url}/x`,
    });
    expect(res.body.toString()).toBe('ok');
    expect(p.hits[0]?.proxyAuthorization).toBe(`Basic ${Buffer.from('corp user:pa:ss@word').toString('base64')}`);
    expect(p.hits[0]?.forwardedHeaders).not.toContain('proxy-authorization');
    expect(seen).toEqual([undefined]);
    expect(lines.join('\n')).toContain(`through http://127.0.0.1:${p.port} (http_proxy)`);
    expect(lines.join('\n')).not.toMatch(/pa%3Ass|pa:ss|corp/);
  });

  it('goes direct for NO_PROXY hosts', async () => {
    const p = await proxy();
    const s = await origin((_req, res) => res.end('direct'));
    const res = await client({ HTTP_PROXY: p.url, NO_PROXY: 'example.com, 127.0.0.1' }).request({
      method: 'GET',
      url: `${s.url}/x`,
    });
    expect(res.body.toString()).toBe('direct');
    expect(p.hits).toEqual([]);
  });

  it('goes direct to [::1] for NO_PROXY=::1, the bare form of the usual loopback list', async () => {
    const p = await proxy();
    const server = createServer((_req, res) => res.end('direct'));
    const listening = await listenLoopback(server, '::1');
    cleanups.push(() => listening.close());
    for (const noProxy of ['localhost,127.0.0.1,::1', '[::1]', `::1 [::1]:${listening.port}`]) {
      const res = await client({ HTTP_PROXY: p.url, NO_PROXY: noProxy }).request({
        method: 'GET',
        url: `http://[::1]:${listening.port}/x`,
      });
      expect(res.body.toString(), noProxy).toBe('direct');
    }
    expect(p.hits).toEqual([]);
  });

  it('names the proxy, without its credentials, when it cannot be reached', async () => {
    const port = await unusedPort();
    const s = await origin((_req, res) => res.end('never'));
    const err = await client({
      HTTPS_PROXY: `http://alice:hunter2secret@127.0.0.1:${port}`,
      HTTP_PROXY: `http://alice:hunter2secret@127.0.0.1:${port}`,
    })
      .requestWithRetry({ method: 'GET', url: `${s.url}/x` }, { ...fast, maxRetries: 1 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdcliError);
    expect((err as IdcliError).exitCode).toBe(4);
    expect((err as IdcliError).code).toBe('NETWORK_REQUEST_FAILED');
    expect((err as IdcliError).message).toBe(
      `GET ${s.url}/x failed: cannot connect to the proxy http://127.0.0.1:${port}: connection refused (after 1 retry)`,
    );
    expect(s.hits).toBe(0);
  });

  it('does not retry a proxy that demands credentials (407), and says so', async () => {
    const p = await proxy({ credentials: { user: 'u', password: 'right' } });
    const s = await origin((_req, res) => res.end('never'));
    const err = await client({ HTTP_PROXY: `http://u:wrongpass1@127.0.0.1:${p.port}` })
      .requestWithRetry({ method: 'GET', url: `${s.url}/x` }, fast)
      .catch((e: unknown) => e);
    expect((err as IdcliError).exitCode).toBe(4);
    expect((err as IdcliError).code).toBe('NETWORK_REQUEST_FAILED');
    expect((err as IdcliError).message).toBe(
      `GET ${s.url}/x failed: the proxy http://127.0.0.1:${p.port} requires authentication (HTTP 407 Proxy Authentication Required)`,
    );
    expect(p.hits).toHaveLength(1);
    expect(s.hits).toBe(0);
  });

  it('refuses a malformed proxy variable as a configuration error naming the variable, not its value', async () => {
    const s = await origin((_req, res) => res.end('never'));
    const err = await client({ HTTPS_PROXY: 'http://bob:s3cretpw@[::1' })
      .request({ method: 'GET', url: `${s.url}/x` })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdcliError);
    expect((err as IdcliError).exitCode).toBe(2);
    expect((err as IdcliError).code).toBe('PROXY_URL_INVALID');
    expect((err as IdcliError).message).toBe('HTTPS_PROXY is not a valid proxy URL');
    const socks = await client({ HTTP_PROXY: 'socks5://127.0.0.1:1080' })
      .request({ method: 'GET', url: `${s.url}/x` })
      .catch((e: unknown) => e);
    expect((socks as IdcliError).exitCode).toBe(2);
    expect((socks as IdcliError).code).toBe('PROXY_URL_INVALID');
    expect((socks as IdcliError).message).toMatch(
      /^HTTP_PROXY uses socks5, but only http:\/\/ and https:\/\/ proxies are supported$/,
    );
  });
});

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { IdcliError } from '../../src/errors.js';
import { createHttpClient, type HttpClient, request } from '../../src/http/client.js';
import { NetworkError, type StreamedBody } from '../../src/http/types.js';
import { FakeClock } from '../support/clock.js';
import { listenLoopback, unusedPort } from '../support/listen.js';
import { until } from '../support/until.js';

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

interface TestServer {
  url: string;
  hits: number;
  /** Each request's body, as text. */
  bodies: string[];
  connections: number;
  close(): Promise<void>;
}

const servers: TestServer[] = [];
const clients: HttpClient[] = [];

async function serve(handler: Handler): Promise<TestServer> {
  const state = { hits: 0, connections: 0, bodies: [] as string[] };
  const server: Server = createServer((req, res) => {
    state.hits++;
    // Read the request body before answering, as a real server would.
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      state.bodies.push(Buffer.concat(chunks).toString());
      handler(req, res, state.hits);
    });
  });
  server.on('connection', () => state.connections++);
  const listening = await listenLoopback(server);
  const t: TestServer = {
    url: `http://127.0.0.1:${listening.port}`,
    get hits() {
      return state.hits;
    },
    get connections() {
      return state.connections;
    },
    bodies: state.bodies,
    close: listening.close,
  };
  servers.push(t);
  return t;
}

function client(opts: Parameters<typeof createHttpClient>[0] = {}): HttpClient {
  const c = createHttpClient({ random: () => 0, ...opts });
  clients.push(c);
  return c;
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const fast = { baseDelayMs: 1, maxDelayMs: 5 };

describe('http client over real sockets', () => {
  it('returns status, headers and the body bytes, over one kept-alive connection', async () => {
    const s = await serve((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    const c = client();
    for (let i = 0; i < 5; i++) {
      const res = await c.request({ method: 'GET', url: `${s.url}/x` });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body.toString()).toBe('{"ok":true}');
    }
    expect(s.connections).toBe(1);
  });

  it('sends method, headers and body', async () => {
    const echo = await serve((req, res) => {
      res.end(
        JSON.stringify({ method: req.method, auth: req.headers.authorization, type: req.headers['content-type'] }),
      );
    });
    const res = await request({
      method: 'POST',
      url: `${echo.url}/t`,
      headers: { authorization: 'Bearer abc', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1',
    });
    expect(JSON.parse(res.body.toString())).toEqual({
      method: 'POST',
      auth: 'Bearer abc',
      type: 'application/x-www-form-urlencoded',
    });
  });

  it('never follows a redirect', async () => {
    const other = await serve((_req, res) => res.end('leaked'));
    const s = await serve((_req, res) => {
      res.writeHead(302, { location: `${other.url}/steal` });
      res.end();
    });
    const res = await client().requestWithRetry({ method: 'GET', url: `${s.url}/x` }, fast);
    expect(res.status).toBe(302);
    expect(other.hits).toBe(0);
  });

  it('retries 429/502/503/504 then succeeds', async () => {
    const statuses = [429, 502, 503, 504];
    const s = await serve((_req, res, n) => {
      res.statusCode = statuses[n - 1] ?? 200;
      res.end(n > statuses.length ? 'done' : 'busy');
    });
    const retries: string[] = [];
    const res = await client().requestWithRetry(
      { method: 'GET', url: `${s.url}/x` },
      { ...fast, onRetry: (i) => retries.push(i.reason) },
    );
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('done');
    expect(res.retries).toBe(4);
    expect(retries).toEqual(['HTTP 429', 'HTTP 502', 'HTTP 503', 'HTTP 504']);
  });

  it('honours Retry-After in seconds', async () => {
    const s = await serve((_req, res, n) => {
      if (n === 1) {
        res.writeHead(429, { 'retry-after': '1' });
        res.end();
      } else res.end('ok');
    });
    // The wait is on the client's clock, which moves only when the test says: the retry goes out at its second.
    const clock = new FakeClock();
    const started = clock.now();
    const told: number[] = [];
    const onRetry = (i: { delayMs: number }) => told.push(i.delayMs);
    const pending = client({ clock }).requestWithRetry({ method: 'GET', url: `${s.url}/x` }, { ...fast, onRetry });
    await until(() => (told.length > 0 ? true : undefined), 10_000, 'the retry');
    expect(told).toEqual([1000]);
    expect(s.hits).toBe(1);
    await clock.elapse(1000, "Retry-After's second");
    const res = await pending;
    expect(res.status).toBe(200);
    expect(s.hits).toBe(2);
    expect(clock.now() - started).toBe(1000);
  });

  it('gives up after maxRetries and returns the last response', async () => {
    const s = await serve((_req, res) => {
      res.statusCode = 503;
      res.end();
    });
    const res = await client().requestWithRetry({ method: 'GET', url: `${s.url}/x` }, { ...fast, maxRetries: 2 });
    expect(res.status).toBe(503);
    expect(res.retries).toBe(2);
    expect(s.hits).toBe(3);
  });

  it('does not retry a plain 500 or a POST', async () => {
    const s = await serve((_req, res) => {
      res.statusCode = 503;
      res.end();
    });
    const c = client();
    expect((await c.requestWithRetry({ method: 'POST', url: `${s.url}/x`, body: 'a' }, fast)).status).toBe(503);
    expect(s.hits).toBe(1);
    const e = await serve((_req, res) => {
      res.statusCode = 500;
      res.end();
    });
    expect((await c.requestWithRetry({ method: 'GET', url: `${e.url}/x` }, fast)).status).toBe(500);
    expect(e.hits).toBe(1);
  });

  it('retries a GET whose streamed body can be read again, whole; never one that can be read only once', async () => {
    const c = client();
    const s = await serve((_req, res, n) => {
      res.statusCode = n === 1 ? 503 : 200;
      res.end();
    });
    const again: StreamedBody = {
      replayable: true,
      length: 5,
      open: () => Readable.from([Buffer.from('ab'), Buffer.from('cde')], { objectMode: false }),
    };
    expect((await c.requestWithRetry({ method: 'GET', url: `${s.url}/x`, body: again }, fast)).status).toBe(200);
    expect(s.bodies).toEqual(['abcde', 'abcde']);
    // Of unknown length, so chunked, which a GET gets only when asked for by name.
    const t = await serve((_req, res) => {
      res.statusCode = 503;
      res.end();
    });
    const once: StreamedBody = {
      replayable: false,
      open: () => Readable.from([Buffer.from('xy'), Buffer.from('z')], { objectMode: false }),
    };
    expect((await c.requestWithRetry({ method: 'GET', url: `${t.url}/x`, body: once }, fast)).status).toBe(503);
    expect(t.bodies).toEqual(['xyz']);
  });

  it('retries a connection dropped before the response and one dropped mid-body', async () => {
    const s = await serve((req, res, n) => {
      if (n === 1) req.socket.destroy();
      else if (n === 2) {
        res.writeHead(200, { 'content-length': '100' });
        // Cut once the start of the body has left: the client holds part of it when the connection dies.
        res.write('{"items":[', () => req.socket.destroy());
      } else res.end('{"whole":true}');
    });
    const res = await client().requestWithRetry({ method: 'GET', url: `${s.url}/x` }, fast);
    expect(res.body.toString()).toBe('{"whole":true}');
    expect(res.retries).toBe(2);
  });

  it('never returns a truncated chunked body', async () => {
    const s = await serve((req, res) => {
      res.writeHead(200);
      res.write('{"partial":', () => req.socket.destroy());
    });
    await expect(client().request({ method: 'GET', url: `${s.url}/x` })).rejects.toBeInstanceOf(NetworkError);
  });

  it('turns an unreachable server into exit 4 after the retries, with no secret in the message', async () => {
    const url = `http://127.0.0.1:${await unusedPort()}/x?code=SECRETCODE`;
    const err = await client()
      .requestWithRetry({ method: 'GET', url }, { ...fast, maxRetries: 2 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdcliError);
    expect((err as IdcliError).exitCode).toBe(4);
    expect((err as IdcliError).code).toBe('NETWORK_REQUEST_FAILED');
    expect((err as IdcliError).message).toMatch(/connection refused \(after 2 retries\)/);
    expect((err as IdcliError).message).not.toContain('SECRETCODE');
  });

  it('times out a silent server as a network error', async () => {
    const s = await serve(() => {});
    const err = await client()
      .request({ method: 'GET', url: `${s.url}/x`, timeoutMs: 200 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).code).toBe('ETIMEDOUT');
  });

  it('aborts in flight and while waiting to retry', async () => {
    // In flight: aborted once the server holds the request, which it never answers.
    const inFlight = new AbortController();
    const silent = await serve(() => inFlight.abort(new Error('interrupted')));
    const held = client().requestWithRetry({ method: 'GET', url: `${silent.url}/x`, signal: inFlight.signal }, fast);
    await expect(held).rejects.toThrow('interrupted');

    // Waiting: aborted a turn after the client announced its 30 s wait for Retry-After, so the wait has begun.
    const s = await serve((_req, res) => {
      res.writeHead(503, { 'retry-after': '30' });
      res.end();
    });
    const ac = new AbortController();
    // On a clock that never moves: only the abort can end the 30 s wait.
    const clock = new FakeClock();
    const onRetry = () => setImmediate(() => ac.abort(new Error('interrupted')));
    const p = client({ clock }).requestWithRetry(
      { method: 'GET', url: `${s.url}/x`, signal: ac.signal },
      { ...fast, onRetry },
    );
    await expect(p).rejects.toThrow('interrupted');
    // The wait itself was cut short, and its timer cleared.
    expect(clock.pending()).not.toContain(30_000);
  });

  it('traces requests with redacted URLs and never the Authorization header', async () => {
    const s = await serve((_req, res) => res.end('ok'));
    const lines: string[] = [];
    const c = client({ log: { verbose: (m) => lines.push(m) } });
    await c.request({
      method: 'GET',
      url: `${s.url}/cb?code=SECRET1&cursor=abc`,
      headers: { authorization: 'Bearer TOKEN1' },
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^GET http:\/\/127\.0\.0\.1:\d+\/cb\?code=\[redacted\]&cursor=abc -> 200 \(\d+ ms, 2 bytes\)$/,
    );
    expect(lines.join('\n')).not.toMatch(/SECRET1|TOKEN1/);
  });
});

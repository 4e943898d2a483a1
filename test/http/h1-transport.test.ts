/**
 * The direct HTTP/1.1 transport against servers that write exact bytes on real loopback sockets: connection
 * reuse and replacement, framing split across writes, and servers that break the protocol.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createH1Transport } from '../../src/http/h1-transport.js';
import { NetworkError, type Transport } from '../../src/http/types.js';
import { listenLoopback } from '../support/listen.js';

interface Received {
  /** Request head as text, then the body. */
  head: string;
  body: string;
  /** Which connection (1-based, in order of acceptance) carried it, and how many requests it had carried before. */
  conn: number;
  nth: number;
}

type Answer = (socket: Socket, req: Received) => void;

interface RawServer {
  url: string;
  requests: Received[];
  connections: number;
  /** Most connections open at the same time. */
  maxOpen: number;
  close(): Promise<void>;
}

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A server that reads each request (head and Content-Length body) and lets `answer` write raw bytes. */
async function rawServer(answer: Answer, host = '127.0.0.1'): Promise<RawServer> {
  const state = { requests: [] as Received[], connections: 0, open: 0, maxOpen: 0 };
  const server: Server = createServer((socket) => {
    const conn = ++state.connections;
    state.maxOpen = Math.max(state.maxOpen, ++state.open);
    socket.on('close', () => state.open--);
    socket.on('error', () => {});
    let pending = Buffer.alloc(0);
    let nth = 0;
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = pending.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        const req: Received = { head, body: pending.subarray(end + 4, end + 4 + length).toString(), conn, nth: nth++ };
        pending = pending.subarray(end + 4 + length);
        state.requests.push(req);
        answer(socket, req);
      }
    });
  });
  const { port, close } = await listenLoopback(server, host);
  const s: RawServer = {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    get requests() {
      return state.requests;
    },
    get connections() {
      return state.connections;
    },
    get maxOpen() {
      return state.maxOpen;
    },
    close,
  };
  cleanups.push(() => s.close());
  return s;
}

function transport(opts: Parameters<typeof createH1Transport>[0] = {}): Transport {
  const t = createH1Transport(opts);
  cleanups.push(() => t.close());
  return t;
}

const ok = (body: string, extra = ''): string =>
  `HTTP/1.1 200 OK\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

/** Writes `text` one byte per event-loop turn, so the client sees every boundary. */
async function trickle(socket: Socket, text: string): Promise<void> {
  for (const byte of Buffer.from(text)) {
    socket.write(Buffer.of(byte));
    await new Promise((r) => setImmediate(r));
  }
}

async function rejection(p: Promise<unknown>): Promise<NetworkError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(NetworkError);
  return err as NetworkError;
}

describe('HTTP/1.1 transport', () => {
  it('writes a well-formed request and keeps one connection for consecutive requests', async () => {
    const srv = await rawServer((sock, req) => sock.write(ok(`#${req.nth}`)));
    const t = transport();
    const bodies: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.send({
        method: 'GET',
        url: `${srv.url}/v1/users?pageIndex=${i}&q=a%20b`,
        headers: { accept: 'application/json', 'user-agent': 'idcli' },
      });
      expect(res.status).toBe(200);
      bodies.push(res.body.toString());
    }
    expect(bodies).toEqual(['#0', '#1', '#2']);
    expect(srv.connections).toBe(1);
    const port = new URL(srv.url).port;
    expect(srv.requests[1]?.head).toBe(
      `GET /v1/users?pageIndex=1&q=a%20b HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\naccept: application/json\r\nuser-agent: idcli`,
    );
    const post = await t.send({
      method: 'POST',
      url: `${srv.url}/oauth/token`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=\u00e9',
    });
    expect(post.body.toString()).toBe('#3');
    expect(srv.requests[3]?.head).toMatch(/^POST \/oauth\/token HTTP\/1\.1\r\n[\s\S]*\r\ncontent-length: 4$/);
    expect(srv.requests[3]?.body).toBe('a=\u00e9');
  });

  it('sends a GET again on a new connection when a kept-alive one was closed under it, but never a POST', async () => {
    // Answers the first request on each connection; a second one finds the connection closed without an answer,
    // as when a server's keep-alive timeout fires just as the request leaves.
    const srv = await rawServer((sock, req) => (req.nth === 0 ? sock.write(ok(`conn ${req.conn}`)) : sock.destroy()));
    const t = transport();
    expect((await t.send({ method: 'GET', url: `${srv.url}/a` })).body.toString()).toBe('conn 1');
    expect((await t.send({ method: 'GET', url: `${srv.url}/b` })).body.toString()).toBe('conn 2');
    expect(srv.requests.map((r) => [r.conn, r.nth])).toEqual([
      [1, 0],
      [1, 1],
      [2, 0],
    ]);
    const err = await rejection(t.send({ method: 'POST', url: `${srv.url}/oauth/token`, body: 'x' }));
    expect(err.code).toBe('ECONNRESET');
    // The POST reached the server once and was not sent again.
    expect(srv.requests.filter((r) => r.head.startsWith('POST'))).toHaveLength(1);
  });

  it('gives up an idle connection a second before the idle timeout the server announced', async () => {
    const srv = await rawServer((sock, req) =>
      sock.write(ok(`${req.conn}`, `Keep-Alive: timeout=${req.head.startsWith('GET /short') ? 1 : 2}, max=100\r\n`)),
    );
    const t = transport();
    const get = async (path: string): Promise<string> =>
      (await t.send({ method: 'GET', url: `${srv.url}${path}` })).body.toString();
    // timeout=1 leaves no safe moment to reuse it; timeout=2 leaves one second.
    expect(await get('/short')).toBe('1');
    expect(await get('/a')).toBe('2');
    expect(await get('/b')).toBe('2');
    await new Promise((r) => setTimeout(r, 1100));
    expect(await get('/c')).toBe('3');
  });

  it('does not reuse a connection that carried bytes beyond the response', async () => {
    const srv = await rawServer((sock) => sock.write(`${ok('one')}HTTP/1.1 200 OK\r\n`));
    const t = transport();
    expect((await t.send({ method: 'GET', url: `${srv.url}/a` })).body.toString()).toBe('one');
    expect((await t.send({ method: 'GET', url: `${srv.url}/b` })).body.toString()).toBe('one');
    expect(srv.connections).toBe(2);
  });

  it('assembles chunked and close-delimited bodies that arrive a byte at a time', async () => {
    const srv = await rawServer((sock, req) => {
      if (req.head.startsWith('GET /chunked')) {
        void trickle(
          sock,
          'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\n{"a"\r\n3\r\n:1}\r\n0\r\nx-t: 1\r\n\r\n',
        );
      } else {
        void trickle(sock, 'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil the end').then(() => sock.end());
      }
    });
    const t = transport();
    const chunked = await t.send({ method: 'GET', url: `${srv.url}/chunked` });
    expect(chunked.body.toString()).toBe('{"a":1}');
    const closed = await t.send({ method: 'GET', url: `${srv.url}/closed` });
    expect(closed.body.toString()).toBe('until the end');
    expect(closed.headers['content-type']).toBe('text/plain');
    // The chunked response left its connection reusable; the close-delimited one could not.
    expect(srv.requests.map((r) => r.conn)).toEqual([1, 1]);
    await t.send({ method: 'GET', url: `${srv.url}/chunked` });
    expect(srv.connections).toBe(2);
  });

  it('fails a response cut short, and one that breaks the protocol, without reusing the connection', async () => {
    const srv = await rawServer((sock, req) => {
      if (req.head.startsWith('GET /short')) sock.end('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc');
      else if (req.head.startsWith('GET /bad'))
        sock.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
      else sock.write(ok('fine'));
    });
    const t = transport();
    const short = await rejection(t.send({ method: 'GET', url: `${srv.url}/short` }));
    expect(short.code).toBe('ECONNRESET');
    expect(short.message).toBe('connection closed before the response was complete');
    const bad = await rejection(t.send({ method: 'GET', url: `${srv.url}/bad` }));
    expect(bad.code).toBe('EPROTO');
    expect(bad.message).toBe('invalid HTTP response: malformed chunk size');
    expect((await t.send({ method: 'GET', url: `${srv.url}/ok` })).body.toString()).toBe('fine');
    expect(srv.connections).toBe(3);
  });

  it('refuses bodies over the limit, declared or not', async () => {
    const srv = await rawServer((sock, req) => {
      if (req.head.startsWith('GET /declared')) sock.write('HTTP/1.1 200 OK\r\ncontent-length: 2000\r\n\r\n');
      else
        sock.write(
          `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n${'x'.repeat(1024)}\r\n400\r\n${'x'.repeat(1024)}\r\n0\r\n\r\n`,
        );
    });
    const t = transport({ maxBodyBytes: 1500 });
    expect((await rejection(t.send({ method: 'GET', url: `${srv.url}/declared` }))).code).toBe('ETOOBIG');
    expect((await rejection(t.send({ method: 'GET', url: `${srv.url}/chunked` }))).code).toBe('ETOOBIG');
  });

  it('opens at most maxSockets connections per origin and queues the rest', async () => {
    const srv = await rawServer((sock, req) => setTimeout(() => sock.write(ok(`${req.conn}`)), 15));
    const t = transport({ maxSockets: 2 });
    const all = await Promise.all(
      Array.from({ length: 7 }, (_, i) => t.send({ method: 'GET', url: `${srv.url}/p${i}` })),
    );
    expect(all.every((r) => r.status === 200)).toBe(true);
    expect(srv.connections).toBe(2);
    expect(srv.maxOpen).toBe(2);
    expect(srv.requests).toHaveLength(7);
  });

  it('refuses a header value that would smuggle in another field, and sends nothing', async () => {
    const srv = await rawServer((sock) => sock.write(ok('')));
    const t = transport();
    const err = await rejection(
      t.send({ method: 'GET', url: `${srv.url}/a`, headers: { authorization: 'Bearer x\r\nx-evil: 1' } }),
    );
    expect(err.code).toBe('EINVAL');
    expect(err.retriable).toBe(false);
    expect(err.message).not.toContain('Bearer');
    expect(srv.requests).toHaveLength(0);
  });

  it('reaches an IPv6 literal, with the brackets in Host only', async () => {
    const srv = await rawServer((sock) => sock.write(ok('v6')), '::1');
    const t = transport();
    const res = await t.send({ method: 'GET', url: `${srv.url}/x` });
    expect(res.body.toString()).toBe('v6');
    expect(srv.requests[0]?.head).toContain(`\r\nhost: [::1]:${new URL(srv.url).port}`);
  });
});

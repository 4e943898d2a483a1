/**
 * Network fixtures for the proxy and TLS tests, all on 127.0.0.1 port 0: a forward proxy (absolute-form
 * requests for http:// targets, CONNECT tunnels for https:// targets, RFC 9110 §9.3.6) that records what it saw
 * and can demand Proxy-Authorization; a broken proxy that fails every CONNECT in one of the ways a hostile or
 * failing proxy does; a TLS-terminating reverse proxy in front of the emulator; and a throwaway
 * CA with a server certificate for 127.0.0.1 made with openssl (test/emulator/pki.ts).
 */
import { createServer, type IncomingMessage, request as httpRequest, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import {
  type AddressInfo,
  connect,
  createServer as createNetServer,
  type Server as NetServer,
  type Socket,
} from 'node:net';
import type { Pki } from '../emulator/pki.js';

export interface ProxyHit {
  method: string;
  /** Absolute URL for forwarded requests, host:port for CONNECT. */
  target: string;
  /** The Proxy-Authorization header as received, if any. */
  proxyAuthorization?: string;
  /** Headers the proxy forwarded to the origin (lower-case names), for forwarded requests. */
  forwardedHeaders?: string[];
}

export interface ForwardProxy {
  url: string;
  port: number;
  hits: ProxyHit[];
  close(): Promise<void>;
}

/** Hop-by-hop and proxy-only headers a proxy must not pass on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'proxy-authorization',
  'proxy-connection',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export async function startForwardProxy(
  /** refuseConnect: answer every CONNECT with this status (a redirect to a login page, say) and open no tunnel. */
  opts: { credentials?: { user: string; password: string }; refuseConnect?: number } = {},
): Promise<ForwardProxy> {
  const hits: ProxyHit[] = [];
  const sockets = new Set<Socket>();
  const expected = opts.credentials
    ? `Basic ${Buffer.from(`${opts.credentials.user}:${opts.credentials.password}`).toString('base64')}`
    : undefined;
  const authorized = (req: IncomingMessage): boolean =>
    expected === undefined || req.headers['proxy-authorization'] === expected;

  const server: Server = createServer((req, res) => {
    const hit: ProxyHit = { method: req.method ?? '', target: req.url ?? '' };
    if (req.headers['proxy-authorization']) hit.proxyAuthorization = req.headers['proxy-authorization'];
    hits.push(hit);
    if (!/^http:\/\//.test(req.url ?? '')) {
      res.writeHead(400).end('absolute-form only');
      return;
    }
    if (!authorized(req)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end();
      return;
    }
    const target = new URL(req.url as string);
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
    hit.forwardedHeaders = Object.keys(headers);
    const upstream = httpRequest(target, { method: req.method, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
      // An origin that hangs up mid-body is passed on as a hang-up, as a real proxy does.
      up.on('close', () => {
        if (!up.complete) res.destroy();
      });
    });
    upstream.on('error', () => res.destroy());
    // A client gone mid-body leaves the upstream paused, where it would never see its origin close: close() ends it.
    upstream.on('socket', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    req.pipe(upstream);
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const hit: ProxyHit = { method: 'CONNECT', target: req.url ?? '' };
    if (req.headers['proxy-authorization']) hit.proxyAuthorization = req.headers['proxy-authorization'];
    hits.push(hit);
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    if (!authorized(req)) {
      client.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n',
      );
      return;
    }
    if (opts.refuseConnect !== undefined) {
      client.end(
        `HTTP/1.1 ${opts.refuseConnect} Refused\r\nLocation: http://login.invalid/\r\nContent-Length: 0\r\n\r\n`,
      );
      return;
    }
    const m = /^(.+):(\d+)$/.exec(req.url ?? '');
    if (!m?.[1] || !m[2]) {
      client.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const upstream = connect(Number(m[2]), m[1].replace(/^\[|\]$/g, ''), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
  });
  return { ...(await listenTracked(server, sockets, 'http')), hits };
}

/** How a broken proxy treats a CONNECT: hang up at once, hang up after half a status line, or never answer. */
export type ConnectFault = 'hang-up' | 'half-status-line' | 'silent';

export interface BrokenProxy {
  url: string;
  port: number;
  /** The CONNECT requests it has read. */
  connects: number;
  close(): Promise<void>;
}

/** A proxy that reads each CONNECT and answers it with `fault`, never opening a tunnel. */
export async function startBrokenProxy(fault: ConnectFault): Promise<BrokenProxy> {
  const sockets = new Set<Socket>();
  const server = createNetServer((client) => {
    client.on('error', () => {});
    let head = '';
    const onData = (chunk: Buffer): void => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      client.off('data', onData);
      if (head.startsWith('CONNECT ')) proxy.connects++;
      if (fault === 'hang-up') client.destroy();
      else if (fault === 'half-status-line') client.end('HTTP/1.1 200 Conn');
    };
    client.on('data', onData);
  });
  const proxy: BrokenProxy = { ...(await listenTracked(server, sockets, 'http')), connects: 0 };
  return proxy;
}

export { makePki, type Pki, requireOpenssl } from '../emulator/pki.js';

export interface TlsFront {
  url: string;
  port: number;
  /** Requests that reached the emulator through this front, as "METHOD path". */
  hits: string[];
  close(): Promise<void>;
}

/** HTTPS on 127.0.0.1 in front of an http:// upstream (the emulator): TLS terminated here, requests passed on. */
export async function startTlsFront(upstream: string, pki: Pki): Promise<TlsFront> {
  const hits: string[] = [];
  const sockets = new Set<Socket>();
  const base = new URL(upstream);
  const server = createHttpsServer({ key: pki.key, cert: pki.cert }, (req, res) => {
    hits.push(`${req.method} ${req.url}`);
    const up = httpRequest(
      { host: base.hostname, port: base.port, method: req.method, path: req.url, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
        r.on('close', () => {
          if (!r.complete) res.destroy();
        });
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  // A client that rejects the certificate hangs up mid-handshake; that is the expected outcome, not a failure here.
  server.on('tlsClientError', () => {});
  return { ...(await listenTracked(server, sockets, 'https')), hits };
}

/** A Node stack frame line, which must never reach the user. */
export const STACK_FRAME = /^\s+at .+:\d+:\d+\)?$/m;

/** Listens on a free loopback port; close() also ends open sockets (keep-alive, tunnels) so it never waits. */
async function listenTracked(server: NetServer, sockets: Set<Socket>, scheme: 'http' | 'https') {
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${scheme}://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

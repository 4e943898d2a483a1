/**
 * HTTP/1.1 over node:net and node:tls: the transport whenever no proxy variable is set.
 *
 * Why not node:http: it reads every socket chunk into a fresh off-heap buffer and wraps each response in
 * streams and event emitters. On a long walk those dead chunks pile up between garbage collections, and the
 * collections that free them make V8 grow its young generation: memory then rises with the length of the
 * collection. Here each connection reads into one buffer of its own (net's `onread`), the response parser
 * copies what it needs out of it at once, and a page costs a few small objects. Why not undici: it takes
 * ~120 ms to load, and start-up time counts for a CLI (it still serves the proxy route, see transport.ts).
 *
 * What it speaks: one request at a time per connection, kept alive and reused (RFC 9112 §9.3), bodies framed
 * by Content-Length, chunked coding or the connection's close; 1xx interim responses skipped; redirects never
 * followed (see Transport).
 */
import type { Socket } from 'node:net';
import { BodyCollector, requestHead } from './h1-message.js';
import { createResponseParser, ProtocolError, type ResponseHead, type ResponseParser } from './h1-response.js';
import { toNetworkError } from './network-errors.js';
import { type HttpRequest, type HttpResponse, NetworkError, type Transport } from './types.js';

export interface H1TransportOptions {
  /** Upper bound on parallel connections per origin; the page walker needs concurrency + 1 (prefetch). */
  maxSockets?: number;
  /** A response larger than this is refused: a single page that big is a broken server, not data. */
  maxBodyBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const SWEEP_MS = 250;
const DEFAULT_MAX_BODY = 256 * 1024 * 1024;
// Node's own limit on a response head is 16 KiB; a little more room costs nothing.
const MAX_HEAD_BYTES = 64 * 1024;
// One read buffer per connection: a 200 kB page arrives in a handful of reads.
const READ_BUFFER_BYTES = 64 * 1024;

type Net = typeof import('node:net');
type Tls = typeof import('node:tls');

/** One request and its response in the making. */
interface Exchange {
  req: HttpRequest;
  url: URL;
  head: string;
  body: Buffer | undefined;
  resolve(res: HttpResponse): void;
  reject(err: unknown): void;
  settled: boolean;
  /** Time of the last byte received (or of the start): the idle timeout runs from it. */
  last: number;
  timeoutMs: number;
  /** Bytes of this response received so far: a reused connection that dies before the first can be replaced. */
  received: number;
  retriedStale: boolean;
  status: number;
  headers: HttpResponse['headers'];
  collector: BodyCollector | undefined;
  conn: Conn | undefined;
  onAbort: () => void;
}

interface Conn {
  socket: Socket;
  pool: Pool;
  parser: ResponseParser | undefined;
  exchange: Exchange | undefined;
  /** Exchanges started on this connection: more than one means it was reused. */
  uses: number;
  keepAlive: boolean;
  /** How long the server said it keeps an idle connection (Keep-Alive: timeout), in ms; 0 when it did not say. */
  serverIdleMs: number;
  /** When it went idle, and until when it may be used again. */
  idleUntil: number;
  dead: boolean;
}

interface Pool {
  key: string;
  url: URL;
  idle: Conn[];
  open: number;
  waiting: Exchange[];
}

export function createH1Transport(options: H1TransportOptions = {}): Transport {
  const maxSockets = Math.max(1, options.maxSockets ?? 4);
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const pools = new Map<string, Pool>();
  let net: Net | undefined;
  let tls: Tls | undefined;

  // Idle timeouts are enforced by one sweeping timer over the exchanges in flight instead of a socket timeout
  // per request: arming and disarming socket timers on every page is a measurable share of a long walk.
  const inFlight = new Set<Exchange>();
  let sweeper: NodeJS.Timeout | undefined;
  const sweep = (): void => {
    const now = Date.now();
    for (const ex of inFlight) {
      if (now - ex.last >= ex.timeoutMs)
        fail(ex, new NetworkError(`no response within ${Math.round(ex.timeoutMs / 1000)} s`, 'ETIMEDOUT'));
    }
    if (inFlight.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };
  const watch = (ex: Exchange): void => {
    inFlight.add(ex);
    if (!sweeper) {
      sweeper = setInterval(sweep, Math.min(SWEEP_MS, Math.max(10, ex.timeoutMs / 4)));
      // The sweeper alone must never keep the process alive.
      sweeper.unref();
    }
  };

  // One 'abort' listener per signal, fanning out to the exchanges currently using it: a walk passes the same
  // signal with every page, and adding and removing an EventTarget listener per request costs more than the
  // rest of the request's bookkeeping. The listener is registered once and only ever calls handlers still in the set.
  const aborters = new WeakMap<AbortSignal, Set<() => void>>();
  const onAbortOf = (signal: AbortSignal): Set<() => void> => {
    let set = aborters.get(signal);
    if (!set) {
      const handlers = new Set<() => void>();
      set = handlers;
      aborters.set(signal, handlers);
      signal.addEventListener(
        'abort',
        () => {
          for (const h of [...handlers]) h();
          handlers.clear();
        },
        { once: true },
      );
    }
    return set;
  };

  function settle(ex: Exchange): void {
    ex.settled = true;
    inFlight.delete(ex);
    if (ex.req.signal) aborters.get(ex.req.signal)?.delete(ex.onAbort);
  }

  /** Fails the exchange and drops its connection, which is mid-message and cannot carry another. */
  function fail(ex: Exchange, err: unknown): void {
    if (ex.settled) return;
    settle(ex);
    const conn = ex.conn;
    ex.conn = undefined;
    if (conn) {
      conn.exchange = undefined;
      destroy(conn);
    } else removeWaiting(ex);
    ex.reject(err);
  }

  function removeWaiting(ex: Exchange): void {
    for (const pool of pools.values()) {
      const at = pool.waiting.indexOf(ex);
      if (at !== -1) pool.waiting.splice(at, 1);
    }
  }

  function poolFor(url: URL): Pool {
    const key = `${url.protocol}//${url.host}`;
    let pool = pools.get(key);
    if (!pool) {
      pool = { key, url, idle: [], open: 0, waiting: [] };
      pools.set(key, pool);
    }
    return pool;
  }

  async function load(protocol: string): Promise<void> {
    if (protocol !== 'http:' && protocol !== 'https:') {
      throw new NetworkError(`unsupported URL scheme ${protocol}`, 'EPROTO', { retriable: false });
    }
    net ??= await import('node:net');
    if (protocol === 'https:') tls ??= await import('node:tls');
  }

  function connect(pool: Pool): Conn {
    const { url } = pool;
    // URL keeps the brackets of an IPv6 literal; the socket wants the bare address.
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const secure = url.protocol === 'https:';
    const port = Number(url.port) || (secure ? 443 : 80);
    const conn: Conn = {
      socket: undefined as unknown as Socket,
      pool,
      parser: undefined,
      exchange: undefined,
      uses: 0,
      keepAlive: true,
      serverIdleMs: 0,
      idleUntil: Number.POSITIVE_INFINITY,
      dead: false,
    };
    // Returning true keeps the socket reading.
    const onread = {
      buffer: Buffer.allocUnsafeSlow(READ_BUFFER_BYTES),
      callback: (n: number, buf: Buffer) => (onData(conn, buf, n), true),
    };
    conn.socket = secure
      ? (tls as Tls).connect({
          // node:tls takes net's onread too (its typings leave it out).
          ...({ onread } as object),
          host,
          port,
          ALPNProtocols: ['http/1.1'],
          // SNI takes a host name only (RFC 6066 §3), never an address.
          ...((net as Net).isIP(host) ? {} : { servername: host }),
        })
      : (net as Net).connect({ host, port, onread });
    conn.socket.setNoDelay(true);
    conn.socket.on('error', (err: Error) => lost(conn, toNetworkError(err)));
    // With allowHalfOpen off, 'end' is followed by 'close'; 'end' comes first and is the one that can
    // complete a body delimited by the close.
    conn.socket.on('end', () => lost(conn, undefined));
    conn.socket.on('close', () => lost(conn, undefined));
    pool.open++;
    return conn;
  }

  function destroy(conn: Conn): void {
    if (conn.dead) return;
    conn.dead = true;
    conn.socket.destroy();
    const pool = conn.pool;
    pool.open--;
    const at = pool.idle.indexOf(conn);
    if (at !== -1) pool.idle.splice(at, 1);
    // A connection slot is free: the longest-waiting exchange gets a new connection.
    const waiter = pool.waiting.shift();
    if (waiter) start(waiter, connect(pool));
  }

  /** The connection ended or failed; the exchange on it, if any, completes (close-delimited) or fails. */
  function lost(conn: Conn, err: Error | undefined): void {
    const ex = conn.exchange;
    conn.exchange = undefined;
    if (ex && !ex.settled) {
      if (!err && conn.parser?.eof()) {
        complete(ex, conn, false);
        return;
      }
      ex.conn = undefined;
      destroy(conn);
      // A kept-alive connection the server closed while idle: the request never reached it, so a GET goes
      // out again on a new connection instead of failing (as browsers and undici do).
      if (
        conn.uses > 1 &&
        ex.received === 0 &&
        !ex.retriedStale &&
        (ex.req.method === 'GET' || ex.req.method === 'HEAD')
      ) {
        ex.retriedStale = true;
        dispatch(ex, true);
        return;
      }
      fail(ex, err ?? new NetworkError('connection closed before the response was complete', 'ECONNRESET'));
      return;
    }
    destroy(conn);
  }

  function onData(conn: Conn, buf: Buffer, n: number): void {
    const ex = conn.exchange;
    if (!ex || !conn.parser) {
      // Bytes nobody asked for (or after the response): the connection's framing can no longer be trusted.
      destroy(conn);
      return;
    }
    ex.last = Date.now();
    ex.received += n;
    let end: number;
    try {
      end = conn.parser.execute(buf, 0, n);
    } catch (err) {
      const why = err instanceof ProtocolError ? err.message : 'malformed response';
      fail(ex, err instanceof NetworkError ? err : new NetworkError(`invalid HTTP response: ${why}`, 'EPROTO'));
      return;
    }
    if (ex.settled) return;
    if (end !== -1) complete(ex, conn, end === n);
  }

  function complete(ex: Exchange, conn: Conn, reusable: boolean): void {
    settle(ex);
    conn.exchange = undefined;
    conn.parser = undefined;
    ex.conn = undefined;
    if (reusable && conn.keepAlive && !conn.dead) release(conn);
    else destroy(conn);
    ex.resolve({ status: ex.status, headers: ex.headers, body: ex.collector?.result() ?? Buffer.alloc(0) });
  }

  function release(conn: Conn): void {
    const pool = conn.pool;
    const waiter = pool.waiting.shift();
    if (waiter) {
      start(waiter, conn);
      return;
    }
    // An idle connection must not keep the process alive.
    conn.socket.unref();
    // Given up a second before the server's announced idle timeout: a request sent just as the server closes
    // the connection would meet a reset, and a POST cannot be sent again.
    conn.idleUntil = conn.serverIdleMs > 0 ? Date.now() + conn.serverIdleMs - 1000 : Number.POSITIVE_INFINITY;
    pool.idle.push(conn);
  }

  /** Puts the exchange on a connection: an idle one (most recent first), a new one, or in the queue. */
  function dispatch(ex: Exchange, fresh: boolean): void {
    const pool = poolFor(ex.url);
    const idle = fresh ? undefined : freshestIdle(pool);
    if (idle) start(ex, idle);
    else if (pool.open < maxSockets) start(ex, connect(pool));
    else if (fresh && pool.idle.length > 0) {
      // The slot of an idle connection goes to the replacement.
      destroy(pool.idle[0] as Conn);
      start(ex, connect(pool));
    } else pool.waiting.push(ex);
  }

  /** The most recently used idle connection still inside the server's idle timeout; older ones are closed. */
  function freshestIdle(pool: Pool): Conn | undefined {
    const now = Date.now();
    for (let conn = pool.idle.pop(); conn; conn = pool.idle.pop()) {
      if (now < conn.idleUntil) return conn;
      destroy(conn);
    }
    return undefined;
  }

  function start(ex: Exchange, conn: Conn): void {
    conn.socket.ref();
    conn.uses++;
    conn.exchange = ex;
    ex.conn = conn;
    ex.received = 0;
    ex.last = Date.now();
    conn.parser = createResponseParser(
      {
        head: (head) => onHead(ex, conn, head),
        body: (buf, start, end) => {
          if (ex.collector && !ex.settled) ex.collector.add(buf, start, end);
        },
      },
      { maxHeadBytes: MAX_HEAD_BYTES },
      ex.req.method === 'HEAD',
    );
    conn.socket.cork();
    conn.socket.write(ex.head, 'latin1');
    if (ex.body) conn.socket.write(ex.body);
    conn.socket.uncork();
  }

  function onHead(ex: Exchange, conn: Conn, head: ResponseHead): void {
    ex.status = head.status;
    ex.headers = head.headers;
    conn.keepAlive = head.keepAlive;
    conn.serverIdleMs = keepAliveTimeoutMs(head.headers['keep-alive']);
    if (head.length !== undefined && head.length > maxBody) {
      throw new NetworkError(`response too large (${head.length} bytes)`, 'ETOOBIG');
    }
    ex.collector = new BodyCollector(head.length, maxBody, head.length ? ex.req.bodyBuffer : undefined);
  }

  async function send(req: HttpRequest): Promise<HttpResponse> {
    const url = typeof req.url === 'string' ? new URL(req.url) : req.url;
    if (!(url.protocol === 'https:' ? tls : url.protocol === 'http:' ? net : undefined)) await load(url.protocol);
    req.signal?.throwIfAborted();
    const body = req.body === undefined ? undefined : typeof req.body === 'string' ? Buffer.from(req.body) : req.body;
    const head = requestHead(req.method, url, req.headers ?? {}, body);
    return new Promise<HttpResponse>((resolve, reject) => {
      const ex: Exchange = {
        req,
        url,
        head,
        body,
        resolve,
        reject,
        settled: false,
        last: Date.now(),
        timeoutMs: req.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        received: 0,
        retriedStale: false,
        status: 0,
        headers: {},
        collector: undefined,
        conn: undefined,
        onAbort: () => fail(ex, req.signal?.reason ?? new DOMException('aborted', 'AbortError')),
      };
      if (req.signal) onAbortOf(req.signal).add(ex.onAbort);
      watch(ex);
      dispatch(ex, false);
    });
  }

  return {
    send,
    close() {
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
      // Every unsettled exchange is in flight, queued ones included.
      for (const ex of [...inFlight]) fail(ex, new NetworkError('transport closed', 'ECONNRESET'));
      for (const pool of pools.values()) for (const conn of [...pool.idle]) destroy(conn);
    },
  };
}

/** `Keep-Alive: timeout=5, max=100` (RFC 2068 §19.7.1.1, still sent by many servers) → 5000; 0 when absent. */
function keepAliveTimeoutMs(header: string | string[] | undefined): number {
  const m = typeof header === 'string' ? /(?:^|[\s,])timeout=(\d+)/i.exec(header) : null;
  return m ? Number(m[1]) * 1000 : 0;
}

import type { Agent as HttpAgent, ClientRequest, IncomingMessage } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { toNetworkError } from './network-errors.js';
import { type HttpRequest, type HttpResponse, NetworkError, type Transport } from './types.js';

export interface NodeTransportOptions {
  /** Upper bound on parallel connections per origin; the page walker needs concurrency + 1 (prefetch). */
  maxSockets?: number;
  /** A response larger than this is refused: a single page that big is a broken server, not data. */
  maxBodyBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const SWEEP_MS = 250;
const DEFAULT_MAX_BODY = 256 * 1024 * 1024;

/**
 * node:http(s) with one keep-alive agent per protocol: the transport whenever no proxy variable is set. Chosen
 * over undici because it loads in a few milliseconds instead of ~120, and start-up time counts for a CLI.
 * node:http and node:https are imported on first use so commands that never touch the network do not pay for them.
 */
export function createNodeTransport(options: NodeTransportOptions = {}): Transport {
  const maxSockets = Math.max(1, options.maxSockets ?? 4);
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  // Idle timeouts are enforced by one sweeping timer over the requests in flight instead of a socket timeout
  // per request: arming and disarming socket timers on every page is a measurable share of a long walk.
  interface Watched {
    last: number;
    timeoutMs: number;
    creq: ClientRequest;
  }
  const inFlight = new Set<Watched>();
  let sweeper: NodeJS.Timeout | undefined;
  const sweep = (): void => {
    const now = Date.now();
    for (const w of inFlight) {
      if (now - w.last >= w.timeoutMs) {
        inFlight.delete(w);
        w.creq.destroy(new NetworkError(`no response within ${Math.round(w.timeoutMs / 1000)} s`, 'ETIMEDOUT'));
      }
    }
    if (inFlight.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  };
  const watch = (w: Watched): void => {
    inFlight.add(w);
    if (!sweeper) {
      sweeper = setInterval(sweep, Math.min(SWEEP_MS, Math.max(10, w.timeoutMs / 4)));
      // The sweeper alone must never keep the process alive.
      sweeper.unref();
    }
  };

  // One 'abort' listener per signal, fanning out to the requests currently using it: a walk passes the same
  // signal with every page, and adding and removing an EventTarget listener per request costs more than
  // the rest of the request's bookkeeping. The listener is registered once and stays: it only ever calls
  // the handlers still in the set.
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

  type Stack = { request: typeof import('node:http').request; agent: HttpAgent };
  let httpStack: Stack | undefined;
  let httpsStack: Stack | undefined;

  async function load(protocol: string): Promise<Stack> {
    if (protocol === 'http:') {
      const http = await import('node:http');
      httpStack ??= { request: http.request, agent: new http.Agent({ keepAlive: true, maxSockets, scheduling: 'lifo' }) };
      return httpStack;
    }
    if (protocol === 'https:') {
      const https = await import('node:https');
      const agent: HttpsAgent = new https.Agent({ keepAlive: true, maxSockets, scheduling: 'lifo' });
      httpsStack ??= { request: https.request as unknown as Stack['request'], agent };
      return httpsStack;
    }
    throw new NetworkError(`unsupported URL scheme ${protocol}`, 'EPROTO', { retriable: false });
  }

  async function send(req: HttpRequest): Promise<HttpResponse> {
    const url = typeof req.url === 'string' ? new URL(req.url) : req.url;
    const { request, agent } = (url.protocol === 'http:' ? httpStack : url.protocol === 'https:' ? httpsStack : undefined) ?? (await load(url.protocol));
    req.signal?.throwIfAborted();
    const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const headers: Record<string, string> = { ...req.headers };
    if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body));

    return new Promise<HttpResponse>((resolve, reject) => {
      let settled = false;
      const fail = (err: unknown): void => {
        if (settled) return;
        settled = true;
        cleanup();
        reject(err);
      };
      const onAbort = (): void => {
        fail(req.signal?.reason ?? new DOMException('aborted', 'AbortError'));
        creq.destroy();
      };
      const aborts = req.signal ? onAbortOf(req.signal) : undefined;
      const cleanup = (): void => {
        inFlight.delete(watched);
        aborts?.delete(onAbort);
      };

      const creq: ClientRequest = request(url, { method: req.method, headers, agent });
      const watched: Watched = { last: Date.now(), timeoutMs, creq };
      watch(watched);
      aborts?.add(onAbort);

      creq.on('error', (err: Error) => fail(toNetworkError(err)));
      creq.on('response', (res: IncomingMessage) => {
        watched.last = Date.now();
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBody) {
          res.destroy();
          fail(new NetworkError(`response too large (${declared} bytes)`, 'ETOOBIG'));
          return;
        }
        // A body that arrives in one chunk is used as is. Otherwise, with a declared length, the chunks are
        // copied straight into one buffer (the caller's when it recycles them): no list of chunks and no
        // second full-size copy through Buffer.concat. Without a length, chunks are concatenated at the end.
        const known = Number.isFinite(declared) && declared > 0 ? declared : -1;
        let first: Buffer | undefined;
        let fixed: Buffer | undefined;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          watched.last = Date.now();
          if (known > 0) {
            if (size + chunk.length > known) {
              res.destroy();
              fail(new NetworkError('response longer than its Content-Length', 'ETOOBIG'));
              return;
            }
            if (size === 0) first = chunk;
            else {
              if (!fixed) {
                fixed = (req.bodyBuffer?.(known) ?? Buffer.allocUnsafeSlow(known)).subarray(0, known);
                (first as Buffer).copy(fixed, 0);
                first = undefined;
              }
              chunk.copy(fixed, size);
            }
            size += chunk.length;
            return;
          }
          size += chunk.length;
          if (size > maxBody) {
            res.destroy();
            fail(new NetworkError(`response too large (over ${maxBody} bytes)`, 'ETOOBIG'));
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', (err: Error) => fail(toNetworkError(err)));
        // 'close' without a complete message means the server hung up mid-body (Content-Length or chunked
        // framing unmet): the bytes we have are a truncated page and must never be used.
        res.on('close', () => {
          if (!res.complete) fail(new NetworkError('connection closed before the response was complete', 'ECONNRESET'));
        });
        res.on('end', () => {
          if (settled) return;
          if (!res.complete) {
            fail(new NetworkError('connection closed before the response was complete', 'ECONNRESET'));
            return;
          }
          settled = true;
          cleanup();
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: fixed
              ? fixed.subarray(0, size)
              : (first ?? (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size))),
          });
        });
      });
      creq.end(req.body);
    });
  }

  return {
    send,
    close() {
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
      httpStack?.agent.destroy();
      httpsStack?.agent.destroy();
    },
  };
}

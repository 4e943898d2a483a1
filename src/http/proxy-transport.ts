import type { Dispatcher } from 'undici';
import {
  checkStatus,
  DEFAULT_DEADLINE_MS,
  deadlineError,
  IDLE_TIMEOUT_MS,
  idleError,
  interimCounter,
  MAX_BODY_BYTES,
} from './limits.js';
import { type BodySink, createBodySink } from './body.js';
import { acceptEncoding } from './content-coding.js';
import { toNetworkError } from './network-errors.js';
import { type ProxyEnv, proxyFor, showProxy } from './proxy-env.js';
import { type HttpRequest, type HttpResponse, NetworkError, outgoingBody, type Transport } from './types.js';

export interface ProxyTransportOptions {
  /** Upper bound on parallel connections per origin (per proxy when proxied). */
  maxSockets?: number;
  /** A response larger than this is refused, as by the plain transport. */
  maxBodyBytes?: number;
  /** Each attempt, from sending the request to the answer's last byte (IDCLI_HTTP_TIMEOUT). */
  deadlineMs?: number;
  /** Ask for compressed bodies and decode them (IDCLI_HTTP_COMPRESSION); default true. */
  compress?: boolean;
}

/**
 * The transport used when a proxy variable is set: undici's EnvHttpProxyAgent, which tunnels https:// targets
 * through CONNECT, forwards http:// targets in absolute form (RFC 9112 §3.2.2) and sends the proxy URL's
 * credentials as Proxy-Authorization. undici is large to load, so it is imported on the first request and
 * only by processes that have a proxy configured; the plain transport serves everyone else.
 *
 * Same contract as the plain transport: one attempt, no redirect followed (undici's dispatcher.request follows
 * none), idle timeout and deadline, abort by signal, compressed bodies decoded, the body as one Buffer, header
 * names in lower case.
 */
export function createProxyTransport(proxy: ProxyEnv, options: ProxyTransportOptions = {}): Transport {
  const maxSockets = Math.max(1, options.maxSockets ?? 4);
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const compress = options.compress ?? true;
  let agent: Dispatcher | undefined;
  let loading: Promise<Dispatcher> | undefined;
  let closed = false;

  function dispatcher(): Promise<Dispatcher> {
    loading ??= import('undici').then(({ EnvHttpProxyAgent }) => {
      agent = new EnvHttpProxyAgent({
        // Passed explicitly (empty meaning "none") so undici never reads process.env on its own: the settings
        // come from the environment idcli was given, and both sides agree on which requests are proxied.
        httpProxy: proxy.httpProxy?.href ?? '',
        httpsProxy: proxy.httpsProxy?.href ?? '',
        noProxy: proxy.noProxy,
        // http:// targets are forwarded in absolute form rather than tunnelled: many proxies allow CONNECT to
        // port 443 only, and a forwarding proxy is what http_proxy has always meant.
        proxyTunnel: false,
        connections: maxSockets,
      });
      if (closed) void agent.destroy().catch(() => {});
      return agent;
    });
    return loading;
  }

  async function send(req: HttpRequest): Promise<HttpResponse> {
    const url = typeof req.url === 'string' ? new URL(req.url) : req.url;
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new NetworkError(`unsupported URL scheme ${url.protocol}`, 'EPROTO', { retriable: false });
    }
    const via = proxyFor(url, proxy);
    const context = via ? { proxy: showProxy(via) } : {};
    const d = agent ?? (await dispatcher());
    req.signal?.throwIfAborted();
    const timeoutMs = req.timeoutMs ?? IDLE_TIMEOUT_MS;
    // Negotiated here unless the caller asked for a coding itself; then the body is handed over as sent.
    const accepted = req.headers?.['accept-encoding'] === undefined ? acceptEncoding(compress) : undefined;

    // One controller carries every way an attempt ends early: the caller's abort; the idle timeout, which (as in the
    // plain transport) counts from the last byte received, connecting and the proxy's CONNECT included; the
    // deadline, which nothing restarts; and a broken interim response.
    const controller = new AbortController();
    let ended: Error | undefined;
    const end = (err: Error): void => {
      ended ??= err;
      controller.abort(err);
    };
    const timer = setTimeout(() => end(idleError(timeoutMs)), timeoutMs);
    const deadline = setTimeout(() => end(deadlineError(deadlineMs)), deadlineMs);
    const interim = interimCounter();
    const onAbort = (): void => controller.abort(req.signal?.reason ?? new DOMException('aborted', 'AbortError'));
    req.signal?.addEventListener('abort', onAbort, { once: true });
    const sent = outgoingBody(req.body);
    // A body that cannot be read ends the attempt with the source's own error, whatever undici makes of it.
    let unreadable: unknown;
    sent.stream?.on('error', (err) => (unreadable ??= err));

    try {
      const res = await d.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: req.method as Dispatcher.HttpMethod,
        // undici frames a body of unknown size as chunked itself, and refuses to be told so.
        headers: {
          ...req.headers,
          ...(accepted === undefined ? {} : { 'accept-encoding': accepted }),
          ...(sent.length === undefined ? {} : { 'content-length': String(sent.length) }),
        },
        body: sent.stream ?? sent.bytes ?? null,
        signal: controller.signal,
        // The timers above are the ones that count; undici's own would only fire later with other codes.
        headersTimeout: 0,
        bodyTimeout: 0,
        // undici hands a status below 100 over as an interim response too, and asserts on it later.
        onInfo: ({ statusCode }) => {
          timer.refresh();
          const err = interim(statusCode);
          if (err) end(err);
        },
      });
      timer.refresh();
      const bad = checkStatus(res.statusCode);
      if (bad) {
        discard(res);
        throw bad;
      }
      let sink: BodySink;
      try {
        sink = createBodySink({ headers: res.headers, accepted, maxBody, bodyBuffer: req.bodyBuffer, fail: end });
      } catch (err) {
        discard(res);
        // Kept as it is: an unasked coding is the server's contract error, not a network failure.
        end(err as Error);
        throw err;
      }
      const body = await readBody(res, sink, () => timer.refresh());
      return { status: res.statusCode, headers: res.headers, body };
    } catch (err) {
      if (req.signal?.aborted) throw req.signal.reason;
      if (ended) throw ended;
      if (unreadable !== undefined) throw unreadable;
      throw toNetworkError(err, context);
    } finally {
      clearTimeout(timer);
      clearTimeout(deadline);
      req.signal?.removeEventListener('abort', onAbort);
      sent.stream?.destroy();
    }
  }

  return {
    send,
    close() {
      closed = true;
      // destroy, not close: close would wait for keep-alive sockets to time out, holding the process open.
      if (agent) void agent.destroy().catch(() => {});
    },
  };
}

/** Reads the body into the sink; an early failure (the limit, a corrupt coding) ends the download through `end`. */
async function readBody(res: Dispatcher.ResponseData, sink: BodySink, onData: () => void): Promise<Buffer> {
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      onData();
      sink.write(chunk);
    }
  } catch (err) {
    if (err instanceof NetworkError || (err instanceof Error && err.name === 'AbortError')) throw err;
    // undici ends the body with an error when the server hung up before the framing was met: a truncated page.
    throw new NetworkError('connection closed before the response was complete', 'ECONNRESET', { cause: err });
  }
  return sink.end();
}

/** Gives up a body unread, and its connection with it; undici reports that as an error nobody needs to hear. */
function discard(res: Dispatcher.ResponseData): void {
  res.body.on('error', () => {});
  res.body.destroy();
}

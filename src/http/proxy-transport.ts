import type { SecureContext } from 'node:tls';
import type { Dispatcher } from 'undici';
import { type Attempt, connectionLimit, type LimitOptions, readBody, startAttempt, targetOf } from './attempt.js';
import { noProxyForUndici, type ProxyEnv, proxyFor, showProxy } from './proxy-env.js';
import { tunnelClient } from './tunnel-client.js';
import { type HttpRequest, type HttpResponse, outgoingBody, type Transport } from './types.js';

/** undici's EnvHttpProxyAgent (CONNECT, or absolute form for http://), imported only when a proxy is set. */
/** `trust` gives the TLS context for the proxy (an https:// one) and for the servers behind it (trust.ts). */
export function createProxyTransport(
  proxy: ProxyEnv,
  options: LimitOptions,
  trust: () => Promise<SecureContext>,
): Transport {
  let agent: Dispatcher | undefined;
  let loading: Promise<Dispatcher> | undefined;
  let closed = false;

  function dispatcher(): Promise<Dispatcher> {
    loading ??= Promise.all([import('undici'), trust()]).then(([{ EnvHttpProxyAgent, Pool }, secureContext]) => {
      agent = new EnvHttpProxyAgent({
        // One context for every TLS connection undici opens: direct, to an https:// proxy, and through a tunnel.
        connect: { secureContext },
        proxyTls: { secureContext },
        requestTls: { secureContext },
        // Passed explicitly so undici never reads process.env itself, and both sides agree on what is proxied.
        httpProxy: proxy.httpProxy?.href ?? '',
        httpsProxy: proxy.httpsProxy?.href ?? '',
        noProxy: noProxyForUndici(proxy.noProxy),
        // http:// targets are forwarded in absolute form rather than tunnelled: many proxies allow CONNECT to
        // port 443 only, and a forwarding proxy is what http_proxy has always meant.
        proxyTunnel: false,
        connections: connectionLimit(options),
        // undici's own factory, but a CONNECT the proxy hangs up on fails the request instead of being sent again.
        clientFactory: (proxyUrl, opts) => tunnelClient(new Pool(proxyUrl, opts), proxyUrl),
      });
      if (closed) void agent.destroy().catch(() => {});
      return agent;
    });
    return loading;
  }

  async function send(req: HttpRequest): Promise<HttpResponse> {
    const url = targetOf(req);
    const via = proxyFor(url, proxy);
    const context = via ? { proxy: showProxy(via) } : {};
    const d = agent ?? (await dispatcher());
    req.signal?.throwIfAborted();
    // undici's own timers would fire later with other codes: the attempt's idle timer covers the CONNECT too.
    const attempt = startAttempt(req, options, true);
    const controller = new AbortController();
    attempt.onEnd((reason) => controller.abort(reason));
    const sent = outgoingBody(req.body);
    // A body that cannot be read ends the attempt with the source's own error, whatever undici makes of it.
    sent.stream?.on('error', (err) => attempt.end(err));
    let res: Dispatcher.ResponseData | undefined;
    try {
      const pending = d.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: req.method,
        // undici frames a body of unknown size as chunked itself, and refuses to be told so.
        headers: {
          ...attempt.headers,
          ...(sent.length === undefined ? {} : { 'content-length': String(sent.length) }),
        },
        body: sent.stream ?? sent.bytes ?? null,
        signal: controller.signal,
        headersTimeout: 0,
        bodyTimeout: 0,
        // undici hands a status below 100 over as an interim response too, and asserts on it later.
        onInfo: ({ statusCode }) => attempt.interim(statusCode),
      });
      res = await settledByEnd(pending, attempt);
      const sink = attempt.response(res.statusCode, res.headers);
      const body = await readBody(res.body, sink, attempt);
      // undici gives the reason phrase as sent, but header names only in lower case (docs/cli.md, "api").
      return { status: res.statusCode, headers: res.headers, body, received: { reason: res.statusText ?? '' } };
    } catch (err) {
      // A body given up unread takes its connection with it; undici reports that as an error nobody needs to hear.
      res?.body.on('error', () => {}).destroy();
      throw attempt.failure(err, context);
    } finally {
      attempt.close();
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

/**
 * undici only notes the abort of a request still waiting for its connection (a CONNECT the proxy has not answered),
 * and settles it when that connection opens or fails: the attempt's end settles it here, whatever the proxy does.
 */
function settledByEnd(pending: Promise<Dispatcher.ResponseData>, attempt: Attempt): Promise<Dispatcher.ResponseData> {
  return new Promise((resolve, reject) => {
    attempt.onEnd((reason) => {
      reject(reason);
      // Should the response come after all, its body is given up with its connection.
      pending.then(
        (late) => late.body.on('error', () => {}).destroy(),
        () => {},
      );
    });
    pending.then(resolve, reject);
  });
}

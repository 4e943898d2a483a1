/**
 * The transport whenever no proxy variable is set: node:http and node:https, each with one keep-alive Agent.
 * They are loaded on the first request, so a command that makes none (a cached `idcli token`) never pays for them.
 */
import type { Agent, ClientRequest, IncomingMessage } from 'node:http';
import { type BodySink, createBodySink } from './body.js';
import { acceptEncoding } from './content-coding.js';
import {
  checkStatus,
  DEFAULT_DEADLINE_MS,
  deadlineError,
  IDLE_TIMEOUT_MS,
  idleError,
  interimCounter,
  MAX_BODY_BYTES,
} from './limits.js';
import { toNetworkError } from './network-errors.js';
import { type HttpRequest, type HttpResponse, NetworkError, outgoingBody, type Transport } from './types.js';

export interface NodeTransportOptions {
  /** Upper bound on parallel connections per origin; the page walker needs concurrency + 1 (prefetch). */
  maxSockets?: number;
  /** A response larger than this is refused: a single page that big is a broken server, not data. */
  maxBodyBytes?: number;
  /** Each attempt, from sending the request to the answer's last byte (IDCLI_HTTP_TIMEOUT). */
  deadlineMs?: number;
  /** Ask for compressed bodies and decode them (IDCLI_HTTP_COMPRESSION); default true. */
  compress?: boolean;
}

interface Client {
  request: typeof import('node:http').request;
  agent: Agent;
}

export function createNodeTransport(options: NodeTransportOptions = {}): Transport {
  const maxSockets = Math.max(1, options.maxSockets ?? 4);
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const compress = options.compress ?? true;
  const clients = new Map<string, Client>();

  async function load(protocol: string): Promise<Client> {
    if (protocol !== 'http:' && protocol !== 'https:') {
      throw new NetworkError(`unsupported URL scheme ${protocol}`, 'EPROTO', { retriable: false });
    }
    const mod = protocol === 'https:' ? await import('node:https') : await import('node:http');
    let client = clients.get(protocol);
    if (!client) {
      // The Agent's timeout applies to idle sockets; Node shortens it to a second before the server's announced
      // Keep-Alive timeout, so a request is not sent on a connection the server is about to close.
      client = {
        request: mod.request,
        agent: new mod.Agent({ keepAlive: true, maxSockets, timeout: IDLE_TIMEOUT_MS }),
      };
      clients.set(protocol, client);
    }
    return client;
  }

  async function send(req: HttpRequest): Promise<HttpResponse> {
    const url = typeof req.url === 'string' ? new URL(req.url) : req.url;
    const client = clients.get(url.protocol) ?? (await load(url.protocol));
    req.signal?.throwIfAborted();
    const body = outgoingBody(req.body);
    const timeoutMs = req.timeoutMs ?? IDLE_TIMEOUT_MS;
    // Negotiated here unless the caller asked for a coding itself; then the body is handed over as sent.
    const accepted = req.headers?.['accept-encoding'] === undefined ? acceptEncoding(compress) : undefined;
    const headers = accepted === undefined ? req.headers : { ...req.headers, 'accept-encoding': accepted };

    return new Promise<HttpResponse>((resolve, reject) => {
      let outgoing: ClientRequest;
      try {
        outgoing = client.request(url, {
          method: req.method,
          headers: framed(headers, body),
          agent: client.agent,
          // The socket's idle timeout: from connecting to the body's last byte, no byte for this long fails.
          timeout: timeoutMs,
        });
      } catch (err) {
        // Node refuses a method or header value that could smuggle in another field; its message names the header.
        const why = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
        body.stream?.destroy();
        reject(new NetworkError(`invalid request (${why})`, 'EINVAL', { retriable: false }));
        return;
      }
      let settled = false;
      const onAbort = (): void => fail(req.signal?.reason ?? new DOMException('aborted', 'AbortError'));
      // The idle timeout below is restarted by every byte, so a server sending one byte a second would never trip
      // it; this one is not, and ends the exchange however the server dribbles its head, interim heads or body.
      const deadline = setTimeout(() => fail(deadlineError(deadlineMs)), deadlineMs);
      const finish = (): void => {
        settled = true;
        clearTimeout(deadline);
        req.signal?.removeEventListener('abort', onAbort);
        // A body the server answered before reading it all is read no further; its connection cannot be reused.
        if (body.stream && !body.stream.readableEnded) {
          body.stream.destroy();
          outgoing.destroy();
        }
      };
      // The request, and with it a connection that is mid-message and cannot carry another, is given up.
      function fail(err: unknown): void {
        if (settled) return;
        finish();
        outgoing.destroy();
        reject(err);
      }
      req.signal?.addEventListener('abort', onAbort, { once: true });
      outgoing.on('timeout', () => fail(idleError(timeoutMs)));
      outgoing.on('error', (err) => fail(toNetworkError(err)));
      const interim = interimCounter();
      outgoing.on('information', (info: { statusCode: number }) => {
        const err = interim(info.statusCode);
        if (err) fail(err);
      });
      outgoing.on('response', (res: IncomingMessage) => {
        // node:http hands a status below 100 over as a final response, one above 599 too.
        const bad = checkStatus(res.statusCode ?? 0);
        if (bad) {
          fail(bad);
          return;
        }
        let sink: BodySink;
        try {
          sink = createBodySink({ headers: res.headers, accepted, maxBody, bodyBuffer: req.bodyBuffer, fail });
        } catch (err) {
          fail(err);
          return;
        }
        let ended = false;
        res.on('data', (chunk: Buffer) => sink.write(chunk));
        res.on('end', () => {
          ended = true;
          sink.end().then((whole) => {
            if (settled) return;
            finish();
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: whole });
          }, fail);
        });
        // Closed without its end: the server hung up before the framing was met, a truncated body.
        res.on('close', () => {
          // 'close' follows every 'end' too; an Error (with its stack) is built only when it means something.
          if (!settled && !ended)
            fail(new NetworkError('connection closed before the response was complete', 'ECONNRESET'));
        });
        // The error that ends a cut body is reported by 'close' above.
        res.on('error', () => {});
      });
      if (body.stream) {
        // A body that cannot be read (the source's own error) ends the attempt with that error.
        body.stream.on('error', fail);
        body.stream.pipe(outgoing);
      } else outgoing.end(body.bytes);
    });
  }

  return {
    send,
    close() {
      for (const client of clients.values()) client.agent.destroy();
      clients.clear();
    },
  };
}

/**
 * The request's framing: Content-Length when the body's size is known, chunked otherwise. Node would send a GET,
 * DELETE or OPTIONS body of unknown size unframed, so chunked is asked for by name.
 */
function framed(headers: HttpRequest['headers'], body: ReturnType<typeof outgoingBody>): HttpRequest['headers'] {
  if (body.length !== undefined) return { ...headers, 'content-length': String(body.length) };
  return body.stream ? { ...headers, 'transfer-encoding': 'chunked' } : headers;
}

// Loaded on the first request, so a command that makes none (a cached `idcli token`) never pays for node:http(s).
import type { Agent, ClientRequest, IncomingMessage } from 'node:http';
import type { SecureContext } from 'node:tls';
import { type Attempt, connectionLimit, type LimitOptions, readBody, startAttempt, targetOf } from './attempt.js';
import { IDLE_TIMEOUT_MS, idleError } from './limits.js';
import { type HttpRequest, type HttpResponse, NetworkError, outgoingBody, type Transport } from './types.js';

interface Client {
  request: typeof import('node:http').request;
  agent: Agent;
}

type Outgoing = ReturnType<typeof outgoingBody>;

/** `trust` gives the TLS context every https:// connection verifies against (trust.ts), loaded with node:https. */
export function createNodeTransport(options: LimitOptions, trust: () => Promise<SecureContext>): Transport {
  const maxSockets = connectionLimit(options);
  const clients = new Map<string, Client>();

  async function load(protocol: string): Promise<Client> {
    const mod = protocol === 'https:' ? await import('node:https') : await import('node:http');
    const tls = protocol === 'https:' ? { secureContext: await trust() } : {};
    let client = clients.get(protocol);
    if (!client) {
      // The Agent's timeout applies to idle sockets; Node shortens it to a second before the server's announced
      // Keep-Alive timeout, so a request is not sent on a connection the server is about to close.
      // ALPN offers HTTP/1.1 alone: a server that speaks only HTTP/2 then refuses in the handshake (see
      // protocol-mismatch.ts) instead of answering a request it cannot read with a status of its own.
      const alpn = protocol === 'https:' ? { ALPNProtocols: ['http/1.1'] } : {};
      client = {
        request: mod.request,
        agent: new mod.Agent({ keepAlive: true, maxSockets, timeout: IDLE_TIMEOUT_MS, ...tls, ...alpn }),
      };
      clients.set(protocol, client);
    }
    return client;
  }

  async function send(req: HttpRequest): Promise<HttpResponse> {
    const url = targetOf(req);
    const client = clients.get(url.protocol) ?? (await load(url.protocol));
    req.signal?.throwIfAborted();
    const attempt = startAttempt(req, options, false);
    const body = outgoingBody(req.body);
    let outgoing: ClientRequest | undefined;
    try {
      outgoing = open(client, url, req.method, framed(attempt.headers, body), attempt);
      const res = await answer(outgoing, body, attempt);
      const sink = attempt.response(res.statusCode ?? 0, res.headers);
      const received = { httpVersion: res.httpVersion, reason: res.statusMessage ?? '', rawHeaders: res.rawHeaders };
      return { status: res.statusCode ?? 0, headers: res.headers, body: await readBody(res, sink, attempt), received };
    } catch (err) {
      throw attempt.failure(err);
    } finally {
      attempt.close();
      // A body the server answered before reading it all is read no further; its connection cannot be reused.
      if (body.stream && !body.stream.readableEnded) {
        body.stream.destroy();
        outgoing?.destroy();
      }
    }
  }

  return {
    send,
    close() {
      for (const client of clients.values()) client.agent.destroy();
      clients.clear();
    },
  };
}

/** The request object, or the refusal of a method or header value that could smuggle in another field. */
function open(client: Client, url: URL, method: string, headers: HttpRequest['headers'], attempt: Attempt) {
  try {
    // The socket's idle timeout: from connecting to the body's last byte, no byte either way for this long fails.
    return client.request(url, { method, headers, agent: client.agent, timeout: attempt.idleMs });
  } catch (err) {
    // Node's message names the header, never its value.
    const why = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
    throw new NetworkError(`invalid request (${why})`, 'EINVAL', { retriable: false });
  }
}

/** Sends the body and resolves with the final response's head; whatever ends the attempt tears the request down. */
function answer(outgoing: ClientRequest, body: Outgoing, attempt: Attempt): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    // A connection that is mid-message cannot carry another: it is given up with the request.
    attempt.onEnd((reason) => {
      outgoing.destroy();
      reject(reason);
    });
    // While the reader holds the body back, the socket is quiet on our account: its timeout starts again.
    outgoing.on('timeout', () =>
      attempt.held ? outgoing.setTimeout(attempt.idleMs) : attempt.end(idleError(attempt.idleMs)),
    );
    outgoing.on('error', reject);
    outgoing.on('information', (info: { statusCode: number }) => attempt.interim(info.statusCode));
    outgoing.on('response', resolve);
    if (body.stream) {
      // A body that cannot be read (the source's own error) ends the attempt with that error.
      body.stream.on('error', (err) => attempt.end(err));
      body.stream.pipe(outgoing);
    } else outgoing.end(body.bytes);
  });
}

/** Node would send a GET, DELETE or OPTIONS body of unknown size unframed, so chunked is asked for by name. */
function framed(headers: HttpRequest['headers'], body: Outgoing): HttpRequest['headers'] {
  if (body.length !== undefined) return { ...headers, 'content-length': String(body.length) };
  return body.stream ? { ...headers, 'transfer-encoding': 'chunked' } : headers;
}

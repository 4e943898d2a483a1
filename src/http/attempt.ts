// One attempt's limits (limits.ts) for both transports: the first to trip ends the attempt, and its error is the one
// the attempt fails with, whatever the transport makes of the connection it tears down.
import type { Readable } from 'node:stream';
import { type Clock, systemClock } from '../clock.js';
import { DEFAULT_HTTP_TIMEOUT_MS } from '../request-defaults.js';
import { type BodySink, createBodySink } from './body.js';
import { acceptEncoding } from './content-coding.js';
import {
  checkStatus,
  deadlineError,
  IDLE_TIMEOUT_MS,
  idleError,
  MAX_INTERIM_RESPONSES,
  protocolError,
} from './limits.js';
import { type ErrorContext, toNetworkError } from './network-errors.js';
import { type HttpHeaders, type HttpRequest, NetworkError } from './types.js';

export interface LimitOptions {
  /** Per origin (per proxy when proxied); the page walker needs concurrency + 1. */
  maxSockets?: number;
  /** From sending the request to the answer's last byte (IDCLI_HTTP_TIMEOUT): every retry gets one of its own. */
  deadlineMs?: number;
  /** IDCLI_HTTP_COMPRESSION; default true. */
  compress?: boolean;
  /** The clock of the deadline and the idle timer; the machine's by default. */
  clock?: Clock;
}

export const connectionLimit = (o: LimitOptions): number => Math.max(1, o.maxSockets ?? 4);

export interface Attempt {
  onEnd(listener: (reason: unknown) => void): void;
  /** Accept-Encoding negotiated here unless the caller asked for a coding itself. */
  readonly headers: Record<string, string>;
  readonly idleMs: number;
  /** Ends the attempt with `reason`, unless something ended it first. */
  end(reason: unknown): void;
  touch(): void;
  /** The reader holds the body back (its sink is full): the server is not idle then. */
  held: boolean;
  interim(status: number): void;
  /** The final response's head; throws before any body byte. */
  response(status: number, headers: HttpHeaders): BodySink;
  /** The reason that ended the attempt, else `err` as a NetworkError. */
  failure(err: unknown, context?: ErrorContext): unknown;
  close(): void;
}

/** The request's URL. Only http:// and https:// are spoken; anything else fails before a connection is made. */
export function targetOf(req: HttpRequest): URL {
  const url = typeof req.url === 'string' ? new URL(req.url) : req.url;
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new NetworkError(`unsupported URL scheme ${url.protocol}`, 'EPROTO', { retriable: false });
  return url;
}

/** Starts one attempt's limits; `idleTimer` false leaves idleness to node:http, which counts bytes sent too. */
export function startAttempt(req: HttpRequest, options: LimitOptions, idleTimer: boolean): Attempt {
  // A plain list of listeners rather than an AbortController, which costs more: a walk makes an attempt per page.
  const listeners: ((reason: unknown) => void)[] = [];
  let ended: { reason: unknown } | undefined;
  const idleMs = req.timeoutMs ?? IDLE_TIMEOUT_MS;
  const deadlineMs = options.deadlineMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  const end = (reason: unknown): void => {
    if (ended) return;
    ended = { reason };
    for (const listener of listeners) listener(reason);
  };
  // Every byte restarts the idle timer, so one byte a second never trips it; nothing restarts the deadline.
  const clock = options.clock ?? systemClock;
  const deadline = clock.setTimeout(() => end(deadlineError(deadlineMs)), deadlineMs);
  const idle = idleTimer
    ? clock.setTimeout(() => (attempt.held ? idle?.refresh() : end(idleError(idleMs))), idleMs)
    : undefined;
  const onAbort = (): void => end(req.signal?.reason ?? new DOMException('aborted', 'AbortError'));
  req.signal?.addEventListener('abort', onAbort, { once: true });
  let interims = 0;
  const accepted =
    req.headers?.['accept-encoding'] === undefined ? acceptEncoding(options.compress ?? true) : undefined;
  const touch = (): void => void idle?.refresh();

  const attempt: Attempt = {
    held: false,
    onEnd: (listener) => void listeners.push(listener),
    headers: accepted === undefined ? { ...req.headers } : { ...req.headers, 'accept-encoding': accepted },
    idleMs,
    end,
    touch,
    interim(status) {
      touch();
      // A status below 100 is not an interim response, though HTTP parsers hand it over as one.
      const bad = checkStatus(status);
      if (bad) end(bad);
      else if (++interims > MAX_INTERIM_RESPONSES)
        end(protocolError(`more than ${MAX_INTERIM_RESPONSES} interim responses`));
    },
    response(status, headers) {
      touch();
      try {
        const bad = checkStatus(status);
        if (bad) throw bad;
        return createBodySink({ headers, accepted, bodyBuffer: req.bodyBuffer, onBytes: req.onBodyBytes, fail: end });
      } catch (err) {
        // An unasked coding stays the IdcliError it is: the server's contract error, not a network failure.
        end(err);
        throw err;
      }
    },
    failure: (err, context) => (ended ? ended.reason : toNetworkError(err, context)),
    close() {
      deadline.clear();
      idle?.clear();
      req.signal?.removeEventListener('abort', onAbort);
    },
  };
  return attempt;
}

/** Reads a response body into its sink; a body that stops short of its framing is a truncated page. */
export function readBody(body: Readable, sink: BodySink, attempt: Pick<Attempt, 'touch' | 'held'>): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let ended = false;
    // While the sink is full the body is paused, and the socket with it: the server waits, not memory.
    const resume = (): void => {
      attempt.held = false;
      attempt.touch();
      body.resume();
    };
    body.on('data', (chunk: Buffer) => {
      attempt.touch();
      if (sink.write(chunk, resume)) return;
      attempt.held = true;
      body.pause();
    });
    body.on('end', () => {
      ended = true;
      sink.end().then(resolve, reject);
    });
    // Closed without its end: the server hung up early, or the attempt was ended (Attempt.failure reports why).
    body.on('error', () => {});
    body.on('close', () => {
      if (!ended) reject(new NetworkError('connection closed before the response was complete', 'ECONNRESET'));
    });
  });
}

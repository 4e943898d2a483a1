/**
 * The transport seam. Everything above it (retries, tracing, the page walker, the token client) talks to
 * this interface only: the direct node:http transport and the proxy-aware undici one are interchangeable.
 */

import type { Readable } from 'node:stream';

/**
 * A request body read as it is sent instead of held whole. A file can be read again from its start, so an attempt
 * can be repeated; a pipe cannot, and its body goes out once.
 */
export interface StreamedBody {
  /** A stream of the whole body, from its first byte; a new one for each attempt when `replayable`. */
  open(): Readable;
  /** The size when known before sending (Content-Length); without it the body is sent chunked. */
  length?: number;
  replayable: boolean;
}

export interface HttpRequest {
  method: string;
  url: string | URL;
  headers?: Record<string, string>;
  body?: string | Buffer | StreamedBody;
  signal?: AbortSignal;
  /** Socket idle timeout: no byte received for this long fails the attempt as a network error. */
  timeoutMs?: number;
  /**
   * Where to assemble a response body of a declared length (at least `size` bytes long). Lets a caller
   * that streams many pages recycle a few buffers instead of leaving one per page to the garbage collector.
   */
  bodyBuffer?: (size: number) => Buffer;
  /**
   * Told as the response body arrives how many bytes it holds so far (from its first byte, at least its declared
   * length; decoded, when it is compressed); false pauses reading it, and the socket with it, until `resume` is
   * called. Lets a caller bound the bytes of many responses at once.
   */
  onBodyBytes?: (bytes: number, resume: () => void) => boolean;
}

export type HttpHeaders = Record<string, string | string[] | undefined>;

export interface HttpResponse {
  status: number;
  /** By lower-case name, repeated fields joined as node:http joins them: what the logic reads. */
  headers: HttpHeaders;
  body: Buffer;
  /** The head as the server sent it, for showing it (`api -i`); what a transport could not learn is absent. */
  received?: ReceivedHead;
}

export interface ReceivedHead {
  /** e.g. "1.1" */
  httpVersion?: string;
  /** The reason phrase as sent, "" when none was. */
  reason: string;
  /** Names and values alternating, in the order and the case the server sent them. */
  rawHeaders?: readonly string[];
}

export interface Transport {
  /**
   * One attempt, no retries and never a redirect followed: a 3xx is returned as is, so credentials can
   * never be carried to another origin behind the caller's back.
   * Rejects with a NetworkError when no complete response arrived, or with the signal's reason when aborted.
   */
  send(req: HttpRequest): Promise<HttpResponse>;
  /** Closes idle keep-alive sockets so the process can exit. */
  close(): void;
}

/** No complete response: refused, reset, dropped mid-body, timed out, DNS failure. Always safe to report. */
export class NetworkError extends Error {
  readonly code: string;
  /**
   * False when trying again cannot help: an untrusted certificate, a proxy demanding credentials, a body over the
   * size limit, an answer that is not HTTP, a spent deadline (see limits.ts).
   */
  readonly retriable: boolean;
  constructor(message: string, code: string, options?: { cause?: unknown; retriable?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'NetworkError';
    this.code = code;
    this.retriable = options?.retriable ?? true;
  }
}

/** First value of a header, which Node gives as string | string[] | undefined. */
export function headerValue(headers: HttpHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** Whether the request can be sent again as it is: anything but a streamed body that can be read only once. */
export function canResend(body: HttpRequest['body']): boolean {
  return body === undefined || typeof body === 'string' || Buffer.isBuffer(body) || body.replayable;
}

/** What one attempt sends: bytes, or a freshly opened stream, and the length for Content-Length when known. */
export function outgoingBody(body: HttpRequest['body']): { bytes?: Buffer; stream?: Readable; length?: number } {
  if (body === undefined) return {};
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    return { bytes, length: bytes.length };
  }
  return { stream: body.open(), ...(body.length === undefined ? {} : { length: body.length }) };
}

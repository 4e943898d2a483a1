// The transport seam: the node:http transport and the proxy-aware undici one are interchangeable behind it.

import type { Readable } from 'node:stream';

/** A body read as it is sent: a file can be reopened for another attempt, a pipe cannot. */
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
  /** Where to assemble a body of declared length, so a caller streaming many pages can recycle buffers. */
  bodyBuffer?: (size: number) => Buffer;
  /** Bytes of the body so far (decoded); false pauses reading until `resume`, to bound many responses at once. */
  onBodyBytes?: (bytes: number, resume: () => void) => boolean;
}

export type HttpHeaders = Record<string, string | string[] | undefined>;

export interface HttpResponse {
  status: number;
  /** By lower-case name, repeated fields joined as node:http joins them: what the logic reads. */
  headers: HttpHeaders;
  body: Buffer;
  /** The head as the server sent it, for showing it (`api -i`); what a transport could not learn is absent. */
  received?: {
    httpVersion?: string;
    /** The reason phrase as sent, "" when none was. */
    reason: string;
    /** Names and values alternating, in the order and the case the server sent them. */
    rawHeaders?: readonly string[];
  };
}

export interface Transport {
  /** One attempt, no redirect followed; rejects with a NetworkError without a whole response, or the abort reason. */
  send(req: HttpRequest): Promise<HttpResponse>;
  /** Closes idle keep-alive sockets so the process can exit. */
  close(): void;
}

/** No complete response: refused, reset, dropped mid-body, timed out, DNS failure. Always safe to report. */
export class NetworkError extends Error {
  readonly code: string;
  /** False when trying again cannot help (bad certificate, proxy auth, size limit, not HTTP, spent deadline). */
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
  if (typeof body === 'string') return outgoingBody(Buffer.from(body));
  if (Buffer.isBuffer(body)) return { bytes: body, length: body.length };
  return { stream: body.open(), ...(body.length === undefined ? {} : { length: body.length }) };
}

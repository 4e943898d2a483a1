/**
 * An incremental HTTP/1.1 response parser (RFC 9112) for a client that has one request at a time on a
 * connection. It is fed whatever the socket delivered and never keeps a reference to those bytes: head lines
 * become strings and body bytes are handed to the sink at once, so the connection can read every chunk into
 * the same buffer. Pure: no I/O, no timers.
 */
import type { HttpHeaders } from './types.js';

export interface ResponseHead {
  status: number;
  headers: HttpHeaders;
  /** The connection may carry another request once this response is complete. */
  keepAlive: boolean;
  /** The body's length when known in advance (0 when there is none); undefined when chunked or delimited by the close. */
  length: number | undefined;
}

export interface ResponseSink {
  /** The final head (interim 1xx heads are skipped). */
  head(head: ResponseHead): void;
  /** Body bytes, buf[start, end): copy them before returning, the buffer is reused. */
  body(buf: Buffer, start: number, end: number): void;
}

/** The server broke the protocol: the connection must not be used again. */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

export interface ResponseParser {
  /**
   * Consumes buf[start, end). Returns the index just past the end of the response once it is complete
   * (bytes after it belong to no request), or -1 when more bytes are needed. Throws ProtocolError.
   */
  execute(buf: Buffer, start: number, end: number): number;
  /** The server closed the connection: true when that completes the response (a body delimited by close). */
  eof(): boolean;
}

/** Limits on what a server may send before the body, and on one chunk-size or trailer line. */
export interface ParserLimits {
  maxHeadBytes: number;
}

const LF = 10;
const CR = 13;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Field values: visible characters, SP, HTAB and obs-text (RFC 9110 §5.5); CR, LF, NUL and other controls are not.
const BAD_VALUE = /[\0-\x08\x0a-\x1f\x7f]/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: [^\r\n]*)?$/;
const CHUNK_SIZE = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;.*)?$/;
// Fields whose duplicates say nothing more (Node keeps the first as well); set-cookie is a list; the rest join.
const FIRST_WINS = new Set([
  'content-type',
  'location',
  'retry-after',
  'date',
  'server',
  'etag',
  'last-modified',
  'age',
  'expires',
]);

const enum State {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  UntilClose,
  Done,
}

/** `noBody`: the request was HEAD, whose response has no body whatever its headers say (RFC 9110 §9.3.2). */
export function createResponseParser(sink: ResponseSink, limits: ParserLimits, noBody = false): ResponseParser {
  let state = State.Head;
  // Where execute() is in the bytes it was given.
  let at = 0;
  // The line being read (head, chunk-size or trailer line), across reads, and the bytes of head or trailers so far.
  let line = '';
  let lines: string[] = [];
  let sectionBytes = 0;
  let remaining = 0;
  let chunkEndSeenCr = false;

  /** The next whole line, without its terminator; undefined when the bytes end first (the part is kept). */
  function readLine(buf: Buffer, end: number): string | undefined {
    const lf = indexOfLf(buf, at, end);
    const stop = lf === -1 ? end : lf;
    sectionBytes += (lf === -1 ? end : lf + 1) - at;
    if (sectionBytes > limits.maxHeadBytes) {
      throw new ProtocolError(state === State.Head ? 'response head too large' : 'response chunk framing too large');
    }
    line += latin1(buf, at, stop);
    at = lf === -1 ? end : lf + 1;
    if (lf === -1) return undefined;
    const text = line;
    line = '';
    // RFC 9112 §2.2: a recipient may take a lone LF as a line terminator and ignore a preceding CR.
    return text.endsWith('\r') ? text.slice(0, -1) : text;
  }

  /** Hands the sink up to `remaining` body bytes. */
  function passBody(buf: Buffer, end: number): void {
    const n = Math.min(remaining, end - at);
    sink.body(buf, at, at + n);
    remaining -= n;
    at += n;
  }

  function endOfHead(): void {
    const head = parseHead(lines);
    lines = [];
    sectionBytes = 0;
    if (head.status < 200) {
      // An interim response (100 Continue, 103 Early Hints): the final one follows on the same connection.
      if (head.status === 101) throw new ProtocolError('unexpected protocol switch (HTTP 101)');
      return;
    }
    const framing = bodyFraming(head, noBody);
    const length = framing.kind === 'none' ? 0 : framing.length;
    sink.head({
      status: head.status,
      headers: head.headers,
      keepAlive: head.keepAlive && framing.kind !== 'close',
      length,
    });
    switch (framing.kind) {
      case 'none':
        state = State.Done;
        break;
      case 'length':
        remaining = framing.length as number;
        state = remaining === 0 ? State.Done : State.Length;
        break;
      case 'chunked':
        state = State.ChunkSize;
        break;
      case 'close':
        state = State.UntilClose;
        break;
    }
  }

  function execute(buf: Buffer, start: number, end: number): number {
    at = start;
    while (at < end || state === State.Done) {
      switch (state) {
        case State.Head: {
          const text = readLine(buf, end);
          if (text === undefined) return -1;
          // Empty lines before the status line are tolerated (RFC 9112 §2.2).
          if (text === '' && lines.length === 0) continue;
          if (text !== '') lines.push(text);
          else endOfHead();
          break;
        }
        case State.Length:
          passBody(buf, end);
          if (remaining === 0) state = State.Done;
          break;
        case State.ChunkSize: {
          const text = readLine(buf, end);
          if (text === undefined) return -1;
          const m = CHUNK_SIZE.exec(text);
          if (!m) throw new ProtocolError('malformed chunk size');
          remaining = Number.parseInt(m[1] as string, 16);
          sectionBytes = 0;
          state = remaining === 0 ? State.Trailers : State.ChunkData;
          break;
        }
        case State.ChunkData:
          passBody(buf, end);
          if (remaining === 0) {
            state = State.ChunkDataEnd;
            chunkEndSeenCr = false;
          }
          break;
        case State.ChunkDataEnd: {
          const b = buf[at++];
          if (b === CR && !chunkEndSeenCr) chunkEndSeenCr = true;
          else if (b === LF) state = State.ChunkSize;
          else throw new ProtocolError('malformed chunk: no line break after its data');
          break;
        }
        case State.Trailers: {
          // Trailer fields are read past, never used: nothing idcli needs travels in them.
          const text = readLine(buf, end);
          if (text === undefined) return -1;
          if (text === '') state = State.Done;
          else if (!/^[^:\s]+:/.test(text)) throw new ProtocolError('malformed trailer field');
          break;
        }
        case State.UntilClose:
          sink.body(buf, at, end);
          at = end;
          break;
        case State.Done:
          return at;
      }
    }
    return -1;
  }

  return {
    execute,
    eof() {
      if (state === State.UntilClose) {
        state = State.Done;
        return true;
      }
      return state === State.Done;
    },
  };
}

interface ParsedHead {
  status: number;
  headers: HttpHeaders;
  keepAlive: boolean;
  minor: number;
}

function parseHead(lines: string[]): ParsedHead {
  const m = STATUS_LINE.exec(lines[0] as string);
  if (!m) throw new ProtocolError('malformed status line');
  const minor = Number(m[1]);
  const status = Number(m[2]);
  const headers: HttpHeaders = {};
  let last: string | undefined;
  for (let k = 1; k < lines.length; k++) {
    const text = lines[k] as string;
    if (text.startsWith(' ') || text.startsWith('\t')) {
      // obs-fold: a user agent replaces it with a space before interpreting the value (RFC 9112 §5.2).
      if (last === undefined) throw new ProtocolError('malformed header field');
      add(headers, last, text.trim(), true);
      continue;
    }
    const colon = text.indexOf(':');
    const name = colon > 0 ? text.slice(0, colon) : '';
    if (!TOKEN.test(name)) throw new ProtocolError('malformed header field');
    const value = text.slice(colon + 1).trim();
    if (BAD_VALUE.test(value)) throw new ProtocolError('malformed header field');
    last = name.toLowerCase();
    add(headers, last, value, false);
  }
  const connection = typeof headers.connection === 'string' ? headers.connection.toLowerCase().split(/\s*,\s*/) : [];
  // HTTP/1.1 connections persist unless closed; HTTP/1.0 ones only when the server says keep-alive (RFC 9112 §9.3).
  const keepAlive = minor === 1 ? !connection.includes('close') : connection.includes('keep-alive');
  return { status, headers, keepAlive, minor };
}

function add(headers: HttpHeaders, name: string, value: string, folded: boolean): void {
  const prev = headers[name];
  if (folded) {
    if (Array.isArray(prev)) prev[prev.length - 1] = `${prev[prev.length - 1]} ${value}`;
    else headers[name] = `${prev ?? ''} ${value}`;
    return;
  }
  if (prev === undefined) headers[name] = name === 'set-cookie' ? [value] : value;
  else if (Array.isArray(prev)) prev.push(value);
  else if (!FIRST_WINS.has(name)) headers[name] = name === 'content-length' ? `${prev},${value}` : `${prev}, ${value}`;
}

type Framing = { kind: 'none' | 'chunked' | 'close'; length?: undefined } | { kind: 'length'; length: number };

/** How the body's end is found (RFC 9112 §6.3), for a response to a request other than CONNECT. */
function bodyFraming(head: ParsedHead, noBody: boolean): Framing {
  if (noBody || head.status === 204 || head.status === 304) return { kind: 'none' };
  const te = head.headers['transfer-encoding'];
  if (te !== undefined) {
    const codings = String(te)
      .toLowerCase()
      .split(/\s*,\s*/);
    // idcli asks for no transfer coding but chunked, which every HTTP/1.1 client must accept.
    if (codings.length !== 1 || codings[0] !== 'chunked' || head.minor === 0) {
      throw new ProtocolError('unsupported transfer coding');
    }
    // Both framings at once is a smuggling pattern: chunked wins, and the connection is not used again.
    if (head.headers['content-length'] !== undefined) head.keepAlive = false;
    return { kind: 'chunked' };
  }
  const cl = head.headers['content-length'];
  if (cl !== undefined) {
    // A list of identical values is one value (RFC 9112 §6.3 item 5); anything else is fatal.
    const values = String(cl).split(/\s*,\s*/);
    const first = values[0] as string;
    if (!/^\d{1,15}$/.test(first) || values.some((v) => v !== first))
      throw new ProtocolError('malformed Content-Length');
    return { kind: 'length', length: Number(first) };
  }
  return { kind: 'close' };
}

function indexOfLf(buf: Buffer, start: number, end: number): number {
  const at = buf.indexOf(LF, start);
  return at === -1 || at >= end ? -1 : at;
}

function latin1(buf: Buffer, start: number, end: number): string {
  return start === end ? '' : buf.toString('latin1', start, end);
}

/**
 * The two halves of an HTTP/1.1 message that the transport builds or fills: the request head it writes, and
 * the response body it collects out of a connection's reused read buffer.
 */
import { NetworkError } from './types.js';

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// What Node's http client accepts in a header value: no CR, LF or other controls but HTAB, nothing beyond latin1.
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

/** The request line and header fields, refusing what would let a value smuggle in another field. */
export function requestHead(
  method: string,
  url: URL,
  headers: Record<string, string>,
  body: Buffer | undefined,
): string {
  if (!TOKEN.test(method)) throw new NetworkError('invalid request method', 'EINVAL', { retriable: false });
  let head = `${method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  for (const name in headers) {
    const value = headers[name] as string;
    // The names are idcli's own; a value may come from a server (a token), so its characters are checked.
    if (!TOKEN.test(name) || BAD_VALUE.test(value)) {
      throw new NetworkError(`invalid character in the ${TOKEN.test(name) ? name : ''} header`, 'EINVAL', {
        retriable: false,
      });
    }
    head += `${name}: ${value}\r\n`;
  }
  if (body !== undefined) head += `content-length: ${body.length}\r\n`;
  return `${head}\r\n`;
}

/**
 * Collects a body out of the connection's reused read buffer. With a declared length, straight into one
 * buffer of that size (the caller's, when it recycles them); otherwise into one that doubles as needed.
 */
export class BodyCollector {
  private buf: Buffer;
  private size = 0;
  constructor(
    length: number | undefined,
    private readonly max: number,
    bodyBuffer: ((size: number) => Buffer) | undefined,
  ) {
    this.buf =
      length !== undefined ? (bodyBuffer?.(length) ?? Buffer.allocUnsafe(length)) : Buffer.allocUnsafe(16 * 1024);
  }

  add(src: Buffer, start: number, end: number): void {
    const n = end - start;
    if (n === 0) return;
    if (this.size + n > this.max) throw new NetworkError(`response too large (over ${this.max} bytes)`, 'ETOOBIG');
    // With a declared length the parser hands over no more than declared, so only an unframed body grows.
    if (this.size + n > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.min(this.max, Math.max(this.buf.length * 2, this.size + n)));
      this.buf.copy(grown, 0, 0, this.size);
      this.buf = grown;
    }
    src.copy(this.buf, this.size, start, end);
    this.size += n;
  }

  result(): Buffer {
    return this.buf.subarray(0, this.size);
  }
}

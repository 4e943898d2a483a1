/**
 * Assembles a response body as it arrives, for both transports: the size limit (on the decoded bytes when the body
 * is compressed), decoding as the bytes stream in, and recycled page buffers. Failures go to `fail` as they happen,
 * so an inflating body stops within the chunk that crosses the limit instead of after the download.
 */
import type { Transform } from 'node:stream';
import { decoderFor } from './content-coding.js';
import { MAX_BODY_BYTES, tooLargeError } from './limits.js';
import { type HttpHeaders, type HttpRequest, headerValue, NetworkError } from './types.js';

export interface BodySink {
  /** A chunk of the body as received on the wire. */
  write(chunk: Buffer): void;
  /** The body on the wire is complete: resolves with the whole body, decoded; rejects as `fail` was told. */
  end(): Promise<Buffer>;
}

export interface BodyOptions {
  headers: HttpHeaders;
  /** The Accept-Encoding the transport sent itself, or undefined when the caller chose one (no decoding then). */
  accepted: string | undefined;
  maxBody?: number;
  bodyBuffer?: HttpRequest['bodyBuffer'];
  /** Ends the exchange; called at most once, with a NetworkError or an IdcliError. */
  fail: (err: Error) => void;
}

/**
 * Throws (before any byte is read) when the declared length is over the limit, or the coding was not asked for.
 */
export function createBodySink(o: BodyOptions): BodySink {
  const maxBody = o.maxBody ?? MAX_BODY_BYTES;
  const declared = Number(headerValue(o.headers, 'content-length'));
  if (declared > maxBody) throw tooLargeError(`${declared} bytes`);
  const decoder =
    o.accepted === undefined ? undefined : decoderFor(headerValue(o.headers, 'content-encoding'), o.accepted);
  return decoder ? decodingSink(decoder, maxBody, o) : identitySink(declared, maxBody, o);
}

function identitySink(declared: number, maxBody: number, o: BodyOptions): BodySink {
  // With a declared length and a caller that recycles page buffers, the chunks go straight into one of those.
  const known = declared > 0 ? declared : undefined;
  const limit = known ?? maxBody;
  let into: Buffer | undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  let failed = false;
  return {
    write(chunk) {
      if (failed) return;
      if (size + chunk.length > limit) {
        failed = true;
        o.fail(tooLargeError(known ? 'longer than its Content-Length' : `over ${maxBody} bytes`));
        return;
      }
      if (known !== undefined) {
        into ??= (o.bodyBuffer?.(known) ?? Buffer.allocUnsafeSlow(known)).subarray(0, known);
        chunk.copy(into, size);
      } else chunks.push(chunk);
      size += chunk.length;
    },
    end: () => Promise.resolve(into ? into.subarray(0, size) : join(chunks, size)),
  };
}

function decodingSink(decoding: Transform, maxBody: number, o: BodyOptions): BodySink {
  // A finished decoder still holds its last output chunk, and a page's objects can outlive the page until a full
  // garbage collection: once the decoder has ended or failed, nothing here leads to it or to its chunks.
  let decoder: Transform | undefined = decoding;
  const chunks: Buffer[] = [];
  let size = 0;
  let failed = false;
  let resolveDone: (body: Buffer) => void = () => {};
  let rejectDone: (err: Error) => void = () => {};
  const done = new Promise<Buffer>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  // A failure before end() is reported through o.fail; the promise must not count as unhandled then.
  done.catch(() => {});
  const failOnce = (err: Error): void => {
    if (failed) return;
    failed = true;
    decoder?.destroy();
    decoder = undefined;
    chunks.length = 0;
    rejectDone(err);
    o.fail(err);
  };
  decoding.on('data', (chunk: Buffer) => {
    if (failed) return;
    size += chunk.length;
    // The limit is on what the body inflates to: a small compressed body may hold gigabytes.
    if (size > maxBody) {
      failOnce(tooLargeError(`over ${maxBody} bytes decoded`));
      return;
    }
    chunks.push(chunk);
  });
  decoding.on('end', () => {
    decoder = undefined;
    if (failed) return;
    const whole = o.bodyBuffer ? o.bodyBuffer(size).subarray(0, size) : Buffer.allocUnsafeSlow(size);
    let at = 0;
    for (const c of chunks) at += c.copy(whole, at);
    chunks.length = 0;
    resolveDone(whole);
  });
  // A corrupt or truncated stream is a body cut short: retried like a connection closed mid-body.
  decoding.on('error', (err: Error) =>
    failOnce(new NetworkError(`the response body could not be decoded (${err.message})`, 'EDECODE', { cause: err })),
  );
  let received = 0;
  return {
    write(chunk) {
      received += chunk.length;
      if (!failed) decoder?.write(chunk);
    },
    end() {
      // No body at all (HEAD, 204, 304) is empty whatever its declared coding; a decoder would call it truncated.
      if (received === 0 && !failed) {
        decoder?.destroy();
        decoder = undefined;
        return Promise.resolve(Buffer.alloc(0));
      }
      if (!failed) decoder?.end();
      return done;
    },
  };
}

function join(chunks: Buffer[], size: number): Buffer {
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
}

// Failures go to `fail` as they happen, so an inflating body stops within the chunk that crosses the limit.
import { type Decoding, decodersFor } from './content-coding.js';
import { GzipHeaderCheck } from './gzip-header.js';
import { MAX_BODY_BYTES, MAX_GZIP_HEADER_BYTES, MAX_SILENT_GZIP_BYTES, tooLargeError } from './limits.js';
import { type HttpHeaders, type HttpRequest, headerValue, NetworkError } from './types.js';

export interface BodySink {
  /** False when the decoder is full: the reader pauses until `resume`, so a fast server fills no buffer. */
  write(chunk: Buffer, resume: () => void): boolean;
  /** The body on the wire is complete: resolves with the whole body, decoded; rejects as `fail` was told. */
  end(): Promise<Buffer>;
}

export interface BodyOptions {
  headers: HttpHeaders;
  /** The Accept-Encoding the transport sent itself, or undefined when the caller chose one (no decoding then). */
  accepted: string | undefined;
  maxBody?: number;
  bodyBuffer?: HttpRequest['bodyBuffer'];
  onBytes?: HttpRequest['onBodyBytes'];
  /** Ends the exchange; called at most once, with a NetworkError or an IdcliError. */
  fail: (err: Error) => void;
}

/** Throws (before any byte is read) when the declared length is over the limit, or the coding was not asked for. */
export function createBodySink(o: BodyOptions): BodySink {
  const maxBody = o.maxBody ?? MAX_BODY_BYTES;
  const declared = Number(headerValue(o.headers, 'content-length'));
  if (declared > maxBody) throw tooLargeError(`${declared} bytes`);
  const decoders =
    o.accepted === undefined ? undefined : decodersFor(headerValue(o.headers, 'content-encoding'), o.accepted);
  return decoders ? new DecodingSink(decoders, maxBody, o) : identitySink(declared, maxBody, o);
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
    write(chunk, resume) {
      if (failed) return true;
      if (size + chunk.length > limit) {
        failed = true;
        o.fail(tooLargeError(known ? 'longer than its Content-Length' : `over ${maxBody} bytes`));
        return true;
      }
      size += chunk.length;
      const go = o.onBytes?.(Math.max(size, known ?? 0), resume) ?? true;
      // The buffer is taken once the caller lets the body go on: a body held back keeps only the chunks it has.
      if (known !== undefined && (into !== undefined || go)) {
        into ??= (o.bodyBuffer?.(known) ?? Buffer.allocUnsafeSlow(known)).subarray(0, known);
        let at = size - chunk.length - chunks.reduce((n, c) => n + c.length, 0);
        for (const c of chunks.splice(0)) at += c.copy(into, at);
        chunk.copy(into, at);
      } else chunks.push(chunk);
      return go;
    },
    end: () => Promise.resolve(into ? into.subarray(0, size) : join(chunks, size)),
  };
}

/** A body through its chain of decoders, each stage's output bounded and fed at the next stage's pace. */
class DecodingSink implements BodySink {
  // A page's objects can outlive the page until a full GC: once the decoders end, nothing here leads to them.
  #stages: Stage[] | undefined;
  readonly #chunks: Buffer[] = [];
  #failed = false;
  #received = 0;
  readonly #done: Promise<Buffer>;
  #resolveDone: (body: Buffer) => void = () => {};
  #rejectDone: (err: Error) => void = () => {};

  constructor(
    decodings: Decoding[],
    private readonly maxBody: number,
    private readonly o: BodyOptions,
  ) {
    this.#stages = decodings.map((d) => ({
      ...d,
      header: d.coding === 'gzip' ? new GzipHeaderCheck(MAX_GZIP_HEADER_BYTES) : undefined,
      ended: false,
      waiting: false,
      outputAt: 0,
    }));
    this.#done = new Promise<Buffer>((resolve, reject) => {
      this.#resolveDone = resolve;
      this.#rejectDone = reject;
    });
    // A failure before end() is reported through o.fail; the promise must not count as unhandled then.
    this.#done.catch(() => {});
    const stages = this.#stages;
    stages.forEach((stage, i) => this.#wire(stage, stages[i + 1]));
  }

  write(chunk: Buffer, resume: () => void): boolean {
    this.#received += chunk.length;
    const first = this.#stages?.[0];
    if (this.#failed || !first) return true;
    // Counted as received too: a body that decodes to almost nothing would otherwise be read without end.
    if (this.#received > this.maxBody) {
      this.#tooLarge('received');
      return true;
    }
    if (this.#feed(first, chunk)) return true;
    waitFor(first, resume);
    return false;
  }

  end(): Promise<Buffer> {
    // No body at all (HEAD, 204, 304) is empty whatever its declared coding; a decoder would call it truncated.
    if (this.#received === 0 && !this.#failed) {
      for (const stage of this.#stages ?? []) stage.decoder.destroy();
      this.#stages = undefined;
      return Promise.resolve(Buffer.alloc(0));
    }
    const first = this.#stages?.[0];
    if (!this.#failed && first && !first.ended) first.decoder.end();
    return this.#done;
  }

  #wire(stage: Stage, next: Stage | undefined): void {
    const { decoder } = stage;
    let produced = 0;
    decoder.on('data', (chunk: Buffer) => {
      if (this.#failed) return;
      stage.outputAt = consumed(stage);
      produced += chunk.length;
      // Every stage's output is bounded: a small compressed body may hold gigabytes, at any depth of the chain.
      if (produced > this.maxBody) return this.#tooLarge('decoded');
      if (!next) {
        this.#chunks.push(chunk);
        // The decoded bytes are those held: while the caller says no more, the decoder waits, and the socket with it.
        if (this.o.onBytes?.(produced, () => decoder.resume()) === false) decoder.pause();
      } else if (!this.#feed(next, chunk)) {
        decoder.pause();
        waitFor(next, () => decoder.resume());
      }
    });
    decoder.on('end', () => {
      stage.ended = true;
      if (this.#failed) return;
      if (next) next.decoder.end();
      else this.#finish(produced);
    });
    decoder.on('error', (err: NodeJS.ErrnoException) => {
      // A stream that has ended is whole; what its decoder makes of bytes sent after it changes nothing.
      if (!stage.ended) this.#failOnce(decodeError(stage, err));
    });
  }

  /** Gives `chunk` to `stage`; false when the stage is full and the bytes before it must wait for its 'drain'. */
  #feed(stage: Stage, chunk: Buffer): boolean {
    const fault = gzipFault(stage, chunk);
    if (fault) {
      this.#failOnce(fault);
      return true;
    }
    // Bytes after a stream that ended are what its framing carried after it (gzip's zero padding): not decoded.
    return stage.ended || stage.decoder.write(chunk);
  }

  #finish(size: number): void {
    this.#stages = undefined;
    const whole = this.o.bodyBuffer ? this.o.bodyBuffer(size).subarray(0, size) : Buffer.allocUnsafeSlow(size);
    let at = 0;
    for (const c of this.#chunks) at += c.copy(whole, at);
    this.#chunks.length = 0;
    this.#resolveDone(whole);
  }

  #tooLarge(what: string): void {
    this.#failOnce(tooLargeError(`over ${this.maxBody} bytes ${what}`));
  }

  #failOnce(err: Error): void {
    if (this.#failed) return;
    this.#failed = true;
    for (const stage of this.#stages ?? []) stage.decoder.destroy();
    this.#stages = undefined;
    this.#chunks.length = 0;
    this.#rejectDone(err);
    this.o.fail(err);
  }
}

const undecodable = (why: string, options: { cause?: unknown; retriable?: boolean } = { retriable: false }) =>
  new NetworkError(`the response body could not be decoded (${why})`, 'EDECODE', options);

/** What a gzip stage refuses before decoding `chunk`: a header that does not end, or data that decodes to nothing. */
function gzipFault(stage: Stage, chunk: Buffer): NetworkError | undefined {
  if (stage.header && !stage.header.feed(chunk))
    return undecodable(`its gzip header does not end within ${MAX_GZIP_HEADER_BYTES} bytes`);
  if (stage.coding === 'gzip' && consumed(stage) - stage.outputAt > MAX_SILENT_GZIP_BYTES)
    return undecodable(`over ${MAX_SILENT_GZIP_BYTES} bytes of its gzip data decode to nothing`);
  return undefined;
}

/** Calls `resume` once `stage` has room again; once, however many chunks were offered meanwhile. */
function waitFor(stage: Stage, resume: () => void): void {
  if (stage.waiting) return;
  stage.waiting = true;
  stage.decoder.once('drain', () => {
    stage.waiting = false;
    resume();
  });
}

interface Stage extends Decoding {
  /** The check of a gzip stream's first header, on the bytes this stage is given. */
  header: GzipHeaderCheck | undefined;
  ended: boolean;
  /** Whoever feeds the stage waits for its 'drain'. */
  waiting: boolean;
  /** How many bytes the decoder had consumed when it last gave some out. */
  outputAt: number;
}

/** The bytes a decoder has consumed (zlib counts them as it works), not those still queued for it. */
const consumed = (stage: Stage): number => stage.decoder.bytesWritten;

/** zlib's words for a member header it cannot read: after a first header that was whole, a later member's. */
const BAD_MEMBER_HEADER = new Set(['incorrect header check', 'unknown compression method', 'unknown header flags set']);

/**
 * A corrupt stream is a body cut short, retried. Bytes after a gzip member (RFC 1952 §2.2) that are not another
 * member are refused, not ignored as curl does: they may be a damaged member, and a retry gets the same bytes.
 */
function decodeError(stage: Stage, err: NodeJS.ErrnoException): NetworkError {
  if (stage.header?.state === 'valid' && err.code === 'Z_DATA_ERROR' && BAD_MEMBER_HEADER.has(err.message))
    return undecodable('bytes after its gzip data are not a gzip member', { cause: err, retriable: false });
  return undecodable(err.message, { cause: err });
}

function join(chunks: Buffer[], size: number): Buffer {
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size); // length checked
}

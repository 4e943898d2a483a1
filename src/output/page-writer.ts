import { Socket } from 'node:net';
import type { Clock, Timer } from '../clock.js';
import { outputError } from '../errors.js';

export interface PageWriter {
  /**
   * One whole page of NDJSON: false once the reader has gone (EPIPE); throws exit 1 when it cannot be written, or
   * WriteCut when a stop signal finds a reader taking no more. `onFlushed` once the chunk's memory is free.
   */
  write(chunk: Buffer | string, onFlushed?: () => void): Promise<boolean>;
  readonly closed: boolean;
}

/** A stop signal came while a reader did not take a chunk: its first `lines` lines reached the reader whole. */
export class WriteCut extends Error {
  constructor(readonly lines: number) {
    super('interrupted while the output was written');
    this.name = 'WriteCut';
  }
}

/** The most bytes POSIX writes to a pipe all or nothing (PIPE_BUF: 512 at least, a page on Linux). */
const PIPE_BUF = process.platform === 'linux' ? 4096 : 512;
/** After a stop signal, a reader that keeps up still gets the page whole; one that stopped cannot hold the exit. */
const STALLED_MS = 500;

/** The run's stop signal, and the clock STALLED_MS is counted on. */
export interface Interrupt {
  signal: AbortSignal;
  clock: Clock;
}

/**
 * One write per page; `onClosed` fires when the reader goes. To a pipe or socket a chunk goes in pieces of at most
 * PIPE_BUF ending after a newline, each all or nothing, so the lines a WriteCut counts are whole.
 */
export function createPageWriter(
  stream: NodeJS.WritableStream,
  onClosed: () => void = () => {},
  interrupt?: Interrupt,
): PageWriter {
  const watch = watchStream(stream, onClosed);
  // A Socket may be a tty.WriteStream.
  const inPieces = stream instanceof Socket && !('isTTY' in stream && stream.isTTY === true);
  return {
    get closed() {
      return watch.closed;
    },
    async write(chunk, onFlushed) {
      if (!watch.check(true) || chunk.length === 0) {
        onFlushed?.();
        return !watch.closed;
      }
      if (inPieces) {
        await writePieces(stream, typeof chunk === 'string' ? Buffer.from(chunk) : chunk, watch.onError, interrupt);
        onFlushed?.();
      } else await writeWhole(stream, chunk, watch.onError, onFlushed);
      return watch.check(false);
    },
  };
}

/** What the stream has told: the reader gone (`closed`), or a failure the next write throws. */
function watchStream(stream: NodeJS.WritableStream, onClosed: () => void) {
  let closed = false;
  let failure: NodeJS.ErrnoException | undefined;
  const onError = (err: NodeJS.ErrnoException): void => {
    if (closed || failure) return;
    // `| head` exiting is a normal end; ENOSPC, EIO and the like mean the output is lost, never a success.
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') {
      closed = true;
      onClosed();
    } else failure = err; // thrown by the next write(), which ends the walk with the resume hint
  };
  // Stays attached for the life of the stream: a late EPIPE must not surface as an uncaught exception.
  stream.on('error', onError);
  return {
    get closed() {
      return closed;
    },
    onError,
    /** Throws the output error a write met; false once the reader has gone (`probe`: also when it left silently). */
    check(probe: boolean): boolean {
      if (failure) throw outputError(failure);
      // A stream destroyed without an error (e.g. a child's stdin after it exited) is a reader that left too.
      if (probe && !closed && destroyed(stream))
        onError(Object.assign(new Error('output closed'), { code: 'ERR_STREAM_DESTROYED' }));
      return !closed;
    },
  };
}

const destroyed = (stream: NodeJS.WritableStream): boolean => 'destroyed' in stream && stream.destroyed === true;

/** A chunk in one write, waiting for 'drain' when the stream is over its high-water mark. */
async function writeWhole(
  stream: NodeJS.WritableStream,
  chunk: Buffer | string,
  onError: (err: NodeJS.ErrnoException) => void,
  onFlushed?: () => void,
): Promise<void> {
  // The callback sees failures some streams never emit as 'error' (writes after destroy).
  const done = (err?: Error | null): void => {
    if (err) onError(err);
    onFlushed?.();
  };
  const more = stream.write(chunk, done);
  // A synchronous stream (a file) that failed this write reports it only on the next tick: ask it now.
  const errored = (stream as { errored?: Error | null }).errored; // NodeJS.WritableStream omits Writable's state
  if (errored) onError(errored);
  if (!more && !destroyed(stream)) {
    await new Promise<void>((resolve) => {
      const events = ['drain', 'close', 'error'];
      const done = (): void => {
        for (const event of events) stream.off(event, done);
        resolve();
      };
      for (const event of events) stream.on(event, done);
    });
  }
}

/** A chunk in pieces each written all or nothing; throws WriteCut when a stop signal finds the reader stalled. */
async function writePieces(
  stream: NodeJS.WritableStream,
  chunk: Buffer,
  onError: (err: NodeJS.ErrnoException) => void,
  interrupt: Interrupt | undefined,
): Promise<void> {
  let lines = 0;
  for (let start = 0; start < chunk.length;) {
    const end = pieceEnd(chunk, start);
    const outcome = await sendPiece(stream, chunk.subarray(start, end), onError, interrupt);
    // The stream may still hold the stalled piece, so the chunk's memory is not handed back.
    if (outcome === 'stalled') throw new WriteCut(lines);
    if (outcome === 'failed') break;
    lines += countLines(chunk, start, end);
    start = end;
  }
}

/** One piece, resolved when the stream is done with it, or 'stalled' when a stop signal finds it waiting. */
function sendPiece(
  stream: NodeJS.WritableStream,
  piece: Buffer,
  onError: (err: NodeJS.ErrnoException) => void,
  interrupt: Interrupt | undefined,
): Promise<'sent' | 'failed' | 'stalled'> {
  return new Promise((resolve) => {
    let timer: Timer | undefined;
    const onStop = (): void => {
      timer = interrupt?.clock.setTimeout(() => settle('stalled'), STALLED_MS);
    };
    const settle = (how: 'sent' | 'failed' | 'stalled'): void => {
      timer?.clear();
      interrupt?.signal.removeEventListener('abort', onStop);
      resolve(how);
    };
    stream.write(piece, (err?: Error | null) => {
      if (err) onError(err);
      settle(err ? 'failed' : 'sent');
    });
    if (interrupt?.signal.aborted) onStop();
    else interrupt?.signal.addEventListener('abort', onStop, { once: true });
  });
}

/** The end of the piece that starts at `start`: at most PIPE_BUF bytes, cut after a newline where there is one. */
function pieceEnd(chunk: Buffer, start: number): number {
  const limit = start + PIPE_BUF;
  if (limit >= chunk.length) return chunk.length;
  const newline = chunk.lastIndexOf(0x0a, limit - 1);
  if (newline >= start) return newline + 1;
  // A line longer than PIPE_BUF goes out as one piece: no piece could carry it whole anyway.
  const end = chunk.indexOf(0x0a, limit);
  return end === -1 ? chunk.length : end + 1;
}

function countLines(chunk: Buffer, start: number, end: number): number {
  let n = 0;
  for (let i = chunk.indexOf(0x0a, start); i !== -1 && i < end; i = chunk.indexOf(0x0a, i + 1)) n++;
  return n;
}

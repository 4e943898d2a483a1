import { outputError } from '../errors.js';

export interface PageWriter {
  /**
   * Writes one chunk (a whole page of NDJSON) and waits while the stream is over its high-water mark.
   * Resolves false once the reader has gone away (EPIPE): the caller should stop quietly. Throws the exit-1 error
   * when the chunk could not be written (a full disk, an I/O error): then it is not (wholly) in the output.
   * `onFlushed` runs once the stream is done with the chunk's memory (written or failed).
   */
  write(chunk: Buffer | string, onFlushed?: () => void): Promise<boolean>;
  readonly closed: boolean;
}

/**
 * Errors that mean "nobody is reading any more" (`| head` exiting), which is a normal way to end. Only EPIPE says
 * so: ENOSPC, EIO and the like mean the output is lost, which must never end as a success.
 */
function isReaderGone(err: NodeJS.ErrnoException): boolean {
  return err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED';
}

/**
 * One write per page instead of one per item (a stream write per item costs far more), with backpressure
 * honoured through 'drain'. `onClosed` fires once when the reader goes (not on a failed write, which
 * throws), so in-flight fetches can be cancelled at once rather than after they complete.
 */
export function createPageWriter(stream: NodeJS.WritableStream, onClosed: () => void = () => {}): PageWriter {
  let closed = false;
  let failure: NodeJS.ErrnoException | undefined;

  const onError = (err: NodeJS.ErrnoException): void => {
    if (closed || failure) return;
    if (isReaderGone(err)) {
      closed = true;
      onClosed();
    } else failure = err; // thrown by the next write(), which ends the walk with the resume hint
  };
  // Stays attached for the life of the stream: an EPIPE reported after the walk must not surface as an
  // uncaught exception with a stack trace.
  stream.on('error', onError);
  const destroyed = (): boolean => (stream as { destroyed?: boolean }).destroyed === true;

  const check = (probe: boolean): boolean => {
    if (failure) throw outputError(failure);
    // A stream destroyed without an error (e.g. a child's stdin after it exited) is a reader that left too.
    if (probe && !closed && destroyed())
      onError(Object.assign(new Error('output closed'), { code: 'ERR_STREAM_DESTROYED' }));
    return !closed;
  };

  return {
    get closed() {
      return closed;
    },
    async write(chunk, onFlushed) {
      if (!check(true) || chunk.length === 0) {
        onFlushed?.();
        return !closed;
      }
      // The callback sees failures some streams never emit as 'error' (writes after destroy).
      const done = (err?: Error | null): void => {
        if (err) onError(err);
        onFlushed?.();
      };
      const more = stream.write(chunk, done);
      // A synchronous stream (a file) that failed this very write reports it only on the next tick; ask it now,
      // so the chunk is not counted as written.
      const errored = (stream as { errored?: Error | null }).errored;
      if (errored) onError(errored);
      if (!more && !destroyed()) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            stream.off('drain', done);
            stream.off('close', done);
            stream.off('error', done);
            resolve();
          };
          stream.on('drain', done);
          stream.on('close', done);
          stream.on('error', done);
        });
      }
      return check(false);
    },
  };
}

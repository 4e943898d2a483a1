/** `idcli api --input`, sent as read: a regular file read anew per attempt, a once-only source kept for retries. */
import { close, constants, createReadStream, fstat, open, type Stats } from 'node:fs';
import { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { isatty, ReadStream } from 'node:tty';
import { promisify } from 'node:util';
import { ExitCode, IdcliError, interrupted, usageError } from '../../errors.js';
import { seconds } from '../../duration.js';
import { MAX_REPLAY_BYTES } from '../../http/limits.js';
import type { StreamedBody } from '../../http/types.js';
import type { Logger } from '../../log.js';
import { errReason } from '../../shape.js';
import { type Clock, systemClock } from '../../clock.js';

export interface InputBody {
  body: StreamedBody;
  /** Where the body comes from, as messages name it: `stdin` or `--input <path>`. */
  what: string;
  close(): void;
}

export interface InputOptions {
  signal: AbortSignal;
  /** How long a body that can be read only once may take to arrive (IDCLI_HTTP_TIMEOUT). */
  deadlineMs: number;
  log: Pick<Logger, 'info'>;
  /** The clock of the deadline; the machine's by default. */
  clock?: Clock;
  stdin: () => Readable & { isTTY?: boolean };
}

export async function openInput(path: string, o: InputOptions): Promise<InputBody> {
  if (path === '-') return keepOrStream(o.stdin(), 'stdin', o);
  const what = `--input ${path}`;
  let fd: number | undefined;
  let stats: Stats;
  try {
    fd = await openWithoutWaiting(path);
    stats = await statOf(fd);
    if (stats.isDirectory()) throw Object.assign(new Error('a directory'), { code: 'EISDIR' });
  } catch (err) {
    if (fd !== undefined) close(fd, () => {});
    throw cannotRead(what, err);
  }
  // A file that says it is empty may still have content to read (those under /proc do): read it like a pipe.
  if (stats.isFile() && stats.size > 0) return fileBody(fd, stats.size, path, what);
  return keepOrStream(streamOf(fd, stats, path), what, o);
}

/** O_NONBLOCK: opening a FIFO otherwise waits for a writer in a pool thread, where no signal or timer can end it. */
const openWithoutWaiting = (path: string): Promise<number> =>
  promisify(open)(path, constants.O_RDONLY | constants.O_NONBLOCK);
const statOf = promisify(fstat);

/** A stream that owns `fd`: a FIFO and a terminal are polled from the event loop, anything else read as a file. */
function streamOf(fd: number, stats: Stats, path: string): Readable {
  if (stats.isFIFO()) return new Socket({ fd, readable: true, writable: false });
  if (isatty(fd)) return new ReadStream(fd);
  return createReadStream(path, { fd });
}

/** A regular file: its size is known (Content-Length), and each attempt reads it again from the first byte. */
function fileBody(fd: number, size: number, path: string, what: string): InputBody {
  const open = () => {
    const bytes = createReadStream(path, { fd, start: 0, end: size - 1, autoClose: false });
    return Readable.from(exactly(bytes, size, what), { objectMode: false });
  };
  return { what, body: { length: size, replayable: true, open }, close: () => close(fd, () => {}) };
}

/** The file's bytes, failing when it turns out shorter than announced: a Content-Length must be met. */
async function* exactly(bytes: Readable, size: number, what: string): AsyncGenerator<Buffer> {
  let sent = 0;
  try {
    for await (const chunk of bytes) {
      const buffer = toBuffer(chunk); // a byte stream (no encoding set) yields Buffers
      sent += buffer.length;
      yield buffer;
    }
  } catch (err) {
    throw cannotRead(what, err);
  }
  if (sent !== size)
    throw usageError(
      'API_BODY_CHANGED',
      `${what} changed while it was being sent`,
      'send a file nothing else writes to',
    );
}

/** Reads a once-only source to its end (kept) or past MAX_REPLAY_BYTES (sent once), until a signal or the deadline. */
async function keepOrStream(source: Readable & { isTTY?: boolean }, what: string, o: InputOptions): Promise<InputBody> {
  if (source.isTTY === true) o.log.info(`reading the request body from ${what}; end it with Ctrl-D`);
  const chunks = source[Symbol.asyncIterator]();
  const kept: Buffer[] = [];
  let size = 0;
  const stop = stopOnSignalOrDeadline(source, what, o);
  try {
    while (size <= MAX_REPLAY_BYTES) {
      const next = await chunks.next();
      if (next.done) return { what, body: keptBody(kept, size), close: () => source.destroy() };
      const chunk = toBuffer(next.value);
      kept.push(chunk);
      size += chunk.length;
    }
  } catch (err) {
    source.destroy();
    throw stop.reason() ?? cannotRead(what, err);
  } finally {
    stop.clear();
  }
  o.log.info(
    `${what} is over ${MAX_REPLAY_BYTES / 1024 / 1024} MB: it is sent as it is read, and the request is not repeated ` +
      '(no retry, no second try after a 401)',
  );
  return { what, body: onceBody(kept, chunks, what), close: () => source.destroy() };
}

function keptBody(kept: Buffer[], size: number): StreamedBody {
  return { length: size, replayable: true, open: () => Readable.from(kept, { objectMode: false }) };
}

function onceBody(kept: Buffer[], rest: AsyncIterator<unknown>, what: string): StreamedBody {
  let opened = false;
  return {
    replayable: false,
    open() {
      if (opened) throw new Error(`${what} can be sent only once`);
      opened = true;
      return Readable.from(keptThenRest(kept, rest, what), { objectMode: false });
    },
  };
}

async function* keptThenRest(kept: Buffer[], rest: AsyncIterator<unknown>, what: string): AsyncGenerator<Buffer> {
  // Each kept chunk is let go once it is handed on, so memory falls back as the body goes out.
  for (let chunk = kept.shift(); chunk !== undefined; chunk = kept.shift()) yield chunk;
  for (;;) {
    const next = await rest.next().catch((err: unknown) => {
      throw cannotRead(what, err);
    });
    if (next.done) return;
    yield toBuffer(next.value);
  }
}

function stopOnSignalOrDeadline(source: Readable & { isTTY?: boolean }, what: string, o: InputOptions) {
  let reason: IdcliError | undefined;
  const stop = (err: IdcliError): void => {
    reason ??= err;
    source.destroy(err);
  };
  const onAbort = (): void => stop(interrupted());
  // A person typing the body ends it with Ctrl-D or gives up with Ctrl-C; no timer hurries them.
  const timer =
    source.isTTY === true
      ? undefined
      : (o.clock ?? systemClock).setTimeout(() => stop(timedOut(what, o.deadlineMs)), o.deadlineMs);
  if (o.signal.aborted) onAbort();
  else o.signal.addEventListener('abort', onAbort, { once: true });
  return {
    reason: () => reason,
    clear() {
      timer?.clear();
      o.signal.removeEventListener('abort', onAbort);
    },
  };
}

/** Exit 4 like any exchange that outlasts IDCLI_HTTP_TIMEOUT: the body is the first part of the request. */
function timedOut(what: string, deadlineMs: number): IdcliError {
  const message = `the request body from ${what} did not arrive within ${seconds(deadlineMs)} s (IDCLI_HTTP_TIMEOUT)`;
  const hint = 'check that something writes it and closes it, or raise IDCLI_HTTP_TIMEOUT';
  return new IdcliError('API_BODY_TIMED_OUT', message, ExitCode.NETWORK, { hint });
}

const toBuffer = (chunk: unknown): Buffer => (Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));

const cannotRead = (what: string, err: unknown): IdcliError =>
  err instanceof IdcliError ? err : usageError('API_BODY_UNREADABLE', `cannot read ${what}: ${errReason(err)}`);

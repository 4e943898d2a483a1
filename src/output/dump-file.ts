/**
 * `idcli list -o FILE`: the items go to FILE, and after each whole page the state beside it (dump-state.ts) says
 * where the walk continues, so that running the same command again picks up where the last run stopped
 * (docs/cli.md, "list -o"). FILE's bytes are written before the state that counts them, so the state never claims
 * bytes that are not in FILE; a page half written when the process died lies beyond the state's length and is cut.
 */
import { closeSync, constants, fstatSync, ftruncateSync, openSync, readSync, statSync } from 'node:fs';
import { ExitCode, IdcliError, OutputError } from '../errors.js';
import { fsFault } from '../fs-faults.js';
import { errCode } from '../shape.js';
import { createFileOutput } from './file-output.js';
import { createPageWriter, type PageWriter } from './page-writer.js';
import { stoppedDumpMessage } from './resume-hint.js';
import {
  type DumpState,
  identityDiff,
  readState,
  removeState,
  statePath,
  StateUnreadable,
  TAIL_BYTES,
  type WalkIdentity,
  writeState,
} from './dump-state.js';

export interface DumpFile {
  /** Items FILE already holds from earlier runs of this walk (0 for a fresh one). */
  readonly resumedItems: number;
  /** Where the walk continues, or undefined when it starts from its target. */
  readonly resumeUrl: string | undefined;
  /** Writes whole pages to FILE; FILE is created on the first one. */
  readonly writer: PageWriter;
  /** A page is in FILE: `items` this run so far, `rest` the URL of what follows it (none after the last page). */
  pageWritten(items: number, rest: string | undefined): void;
  /** The walk is complete: the state goes, FILE stays. */
  complete(): void;
  /** The walk stopped with `cause`: says on `stderr` how to continue and returns the error the run ends with. */
  stopped(cause: unknown, stderr: Pick<NodeJS.WritableStream, 'write'>): unknown;
}

export interface DumpOptions {
  file: string;
  walk: WalkIdentity;
  /** --restart: the state is discarded and FILE written anew. */
  restart: boolean;
  /** The origin the token may go to: a state's URL elsewhere is refused. */
  apiOrigin: string;
  info: (msg: string) => void;
  /** Milliseconds, for spacing the state's replacements. */
  now: () => number;
}

/** The file store's mode: the items may be as private as the token that fetched them. */
const FILE_MODE = 0o600;
const RESTART = 'add --restart to start over';
/**
 * The state is replaced after a page only when the last replacement is this old, and always when the walk stops:
 * replacing a file by rename while FILE streams to the same disk costs the file system far more than the page's
 * write (the bench's `-o FILE` row), and a run killed outright fetches at most this much of the walk again.
 */
export const STATE_INTERVAL_MS = 100;

/**
 * Opens the dump: reads and checks the state (exit 2 for one that cannot be continued), and on a resume cuts FILE
 * back to its last whole page. Nothing touches the network here.
 */
export function openDump(opts: DumpOptions): DumpFile {
  let st: ReturnType<typeof statSync> | undefined;
  try {
    // Not throwIfNoEntry: from Node 22 on it also hides ENOTDIR.
    st = statSync(opts.file);
  } catch (err) {
    // A file in the way above FILE (ENOTDIR), or a directory that may not be entered: told before any request.
    if (errCode(err) !== 'ENOENT') throw fsFault(err, { doing: 'create', path: opts.file, dir: opts.file });
  }
  if (st?.isDirectory()) throw usage(`${opts.file} is a directory`, 'name a file for -o, e.g. users.ndjson');
  const state = statePath(opts.file);
  // The state goes first: FILE written anew under an old state could be taken for the old walk's pages.
  if (opts.restart) removeState(state);
  const saved = opts.restart ? undefined : loadState(opts, state);
  return new Dump(opts, state, saved);
}

function loadState(opts: DumpOptions, state: string): { state: DumpState; fd: number } | undefined {
  let saved: DumpState | undefined;
  try {
    saved = readState(state);
  } catch (err) {
    if (err instanceof StateUnreadable)
      throw usage(`cannot continue ${opts.file}: its state ${state} cannot be used (${err.message})`);
    const code = errCode(err);
    if (code === undefined) throw err;
    const fault = fsFault(err, { doing: 'read', path: state, dir: state, orElse: `or ${RESTART}` });
    // A state that cannot be read is exit 2 naming --restart, whatever the cause: starting over always gets past it.
    if (fault.exitCode === ExitCode.USAGE) throw fault;
    throw usage(`cannot continue ${opts.file}: its state ${state} cannot be read (${code})`);
  }
  if (saved === undefined) return undefined;
  const diff = identityDiff(saved.walk, opts.walk);
  if (diff !== undefined) {
    throw usage(
      `${opts.file} holds part of another walk: ${diff}`,
      `run that walk's command to continue it, or ${RESTART} with this one`,
    );
  }
  if (!sameOrigin(saved.next, opts.apiOrigin))
    throw usage(`cannot continue ${opts.file}: its state ${state} points to another origin`);
  const fd = openForResume(opts.file, saved);
  return { state: saved, fd };
}

/** FILE opened for appending and cut to the state's length, once it proves to be the file the state describes. */
function openForResume(file: string, saved: DumpState): number {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDWR | constants.O_APPEND);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw usage(`${file} is gone, but its state says it holds ${saved.items} items`);
    throw fsFault(err, { doing: 'open', path: file, dir: file, orElse: `or ${RESTART}` });
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw usage(`${file} is not a regular file`);
    if (st.size < saved.bytes)
      throw usage(`${file} is shorter (${st.size} bytes) than its state says (${saved.bytes} bytes)`);
    const tail = Buffer.from(saved.tail, 'hex');
    const got = Buffer.alloc(tail.length);
    if (tail.length > 0) readSync(fd, got, 0, tail.length, saved.bytes - tail.length);
    if (!got.equals(tail)) throw usage(`${file} does not end where its state says: it changed since`);
    // The bytes past the last whole page are a page the last run did not finish.
    if (st.size > saved.bytes) ftruncateSync(fd, saved.bytes);
    return fd;
  } catch (err) {
    closeSync(fd);
    if (err instanceof IdcliError) throw err;
    throw fsFault(err, { doing: 'read', path: file, dir: file, orElse: `or ${RESTART}` });
  }
}

class Dump implements DumpFile {
  readonly resumedItems: number;
  readonly resumeUrl: string | undefined;
  readonly writer: PageWriter;
  #fd: number | undefined;
  #inner: PageWriter | undefined;
  /** FILE's length and last bytes after the last page written. */
  #bytes: number;
  #tail: Buffer;
  /** What the state on disk says: its length and items, or undefined while there is none. */
  #recorded: { bytes: number; items: number } | undefined;
  /** A state for the pages written since the last replacement, not on disk yet. */
  #pending: DumpState | undefined;
  #lastReplaced = Number.NEGATIVE_INFINITY;
  #wroteThisRun = false;

  constructor(
    private readonly opts: DumpOptions,
    private readonly state: string,
    saved: { state: DumpState; fd: number } | undefined,
  ) {
    this.resumedItems = saved?.state.items ?? 0;
    this.resumeUrl = saved?.state.next;
    this.#fd = saved?.fd;
    this.#bytes = saved?.state.bytes ?? 0;
    this.#tail = Buffer.from(saved?.state.tail ?? '', 'hex');
    this.#recorded = saved && { bytes: saved.state.bytes, items: saved.state.items };
    if (saved) {
      const n = saved.state.items;
      opts.info(`idcli: resuming ${opts.file} after ${n} ${n === 1 ? 'item' : 'items'}`);
    }
    this.writer = {
      get closed() {
        return false;
      },
      write: (chunk, onFlushed) => this.#write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk, onFlushed),
    };
  }

  async #write(chunk: Buffer, onFlushed?: () => void): Promise<boolean> {
    this.#inner ??= createPageWriter(createFileOutput(this.#open()));
    // Taken before the write: the page's memory goes back to the walk once the stream is done with it.
    const tail = Buffer.concat([this.#tail, chunk.subarray(Math.max(0, chunk.length - TAIL_BYTES))]);
    const ok = await this.#inner.write(chunk, onFlushed);
    this.#bytes += chunk.length;
    this.#tail = tail.subarray(Math.max(0, tail.length - TAIL_BYTES));
    this.#wroteThisRun = true;
    return ok;
  }

  /** FILE for a fresh walk, created private when the first page arrives; an existing FILE is overwritten. */
  #open(): number {
    if (this.#fd !== undefined) return this.#fd;
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_APPEND;
    try {
      this.#fd = openSync(this.opts.file, flags, FILE_MODE);
    } catch (err) {
      // Not yet an output that failed half-way: nothing is written, and the user mends the directory or FILE.
      throw fsFault(err, { doing: 'create', path: this.opts.file, dir: this.opts.file });
    }
    return this.#fd;
  }

  pageWritten(items: number, rest: string | undefined): void {
    // After the last page nothing is left to continue: the state stays at a page before until complete() removes
    // it, so a run killed in between fetches the rest again.
    if (rest === undefined) return;
    const { walk } = this.opts;
    this.#pending = {
      walk,
      next: rest,
      items: this.resumedItems + items,
      bytes: this.#bytes,
      tail: this.#tail.toString('hex'),
    };
    if (this.opts.now() - this.#lastReplaced >= STATE_INTERVAL_MS) this.#replaceState();
  }

  /** Puts the pending state on disk; FILE's bytes it counts are already there (written before this is called). */
  #replaceState(): void {
    const next = this.#pending;
    if (next === undefined) return;
    this.#pending = undefined;
    try {
      writeState(this.state, next);
    } catch (err) {
      // FILE goes back to what the state on disk says, so the two still agree for the next run.
      this.#cutTo(this.#recorded?.bytes ?? 0);
      throw new OutputError(err);
    }
    this.#recorded = { bytes: next.bytes, items: next.items };
    this.#lastReplaced = this.opts.now();
  }

  #cutTo(bytes: number): void {
    try {
      if (this.#fd !== undefined) ftruncateSync(this.#fd, bytes);
    } catch {
      // The state still describes a prefix of FILE: the next run cuts the rest.
    }
  }

  complete(): void {
    this.#pending = undefined;
    // A walk with nothing to write still leaves the (empty) FILE it was asked for.
    this.#open();
    removeState(this.state);
    this.#close();
  }

  stopped(cause: unknown, stderr: Pick<NodeJS.WritableStream, 'write'>): unknown {
    let failure: unknown;
    try {
      this.#replaceState();
    } catch (err) {
      failure = err; // the disk that failed the page may refuse the state too: that is the error to report
    }
    this.#close();
    const recorded = this.#recorded;
    // Before the first state there is nothing to continue: the next run starts over, as this one did.
    if (recorded !== undefined) stderr.write(stoppedDumpMessage(recorded.items, this.opts.file));
    // A 4xx or a broken page on the very URL the state gave: the position may no longer be valid (an expired
    // cursor), and only starting over gets past it.
    if (this.resumeUrl !== undefined && !this.#wroteThisRun && cause instanceof IdcliError) {
      if (cause.exitCode === ExitCode.NETWORK || cause.exitCode === ExitCode.CONTRACT) {
        const hint = `if the service no longer accepts where the last run stopped, ${RESTART}`;
        return new IdcliError(cause.message, cause.exitCode, {
          hint: cause.hint ? `${cause.hint}; ${hint}` : hint,
          cause,
        });
      }
    }
    return cause instanceof OutputError || failure === undefined ? cause : failure;
  }

  #close(): void {
    if (this.#fd === undefined) return;
    try {
      closeSync(this.#fd);
    } catch {
      // Every page was written with write(2); a failing close loses nothing that the state counts.
    }
    this.#fd = undefined;
  }
}

function sameOrigin(url: string, origin: string): boolean {
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}

function usage(message: string, hint = RESTART): IdcliError {
  return new IdcliError(message, ExitCode.USAGE, { hint });
}

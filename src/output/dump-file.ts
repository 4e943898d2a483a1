/**
 * `idcli list -o FILE` (docs/cli.md, "list -o"). FILE's bytes are written before the state that counts them, so the
 * state never claims bytes not in FILE; a page half written when the process died lies beyond it and is cut.
 */
import { closeSync, constants, fchmodSync, ftruncateSync, openSync, readSync, type Stats, statSync } from 'node:fs';
import { basename, sep } from 'node:path';
import { type ErrorCode, ExitCode, IdcliError, OutputError, usageError } from '../errors.js';
import { fsFault, type FsFaultAt } from '../fs-faults.js';
import { errCode } from '../shape.js';
import { PRIVATE_FILE_MODE, removeQuietly } from '../private-file.js';
import {
  inspectPrivateFile,
  NAME_MAX,
  nameFits,
  O_NOFOLLOW,
  O_NONBLOCK,
  refuseOpenedFile,
  resolveTrusted,
} from '../private-path.js';
import { claimDump, CLAIM_TEMP_SUFFIX } from './dump-claim.js';
import { createFileOutput } from './file-output.js';
import { itemCount } from './human.js';
import { createPageWriter, type PageWriter } from './page-writer.js';
import { stoppedDumpMessage } from './resume-hint.js';
import {
  type DumpState,
  identityDiff,
  overwriteState,
  probeState,
  readState,
  removeState,
  statePath,
  StateUnreadable,
  TAIL_BYTES,
  type WalkIdentity,
  writeState,
} from './dump-state.js';

export interface DumpFile {
  readonly resumedItems: number;
  /** Where the walk continues, or undefined when it starts from its target. */
  readonly resumeUrl: string | undefined;
  /** FILE is created on the first page. */
  readonly writer: PageWriter;
  /** `items` this run so far, `rest` the URL of what follows (none after the last page). */
  pageWritten(items: number, rest: string | undefined): void;
  complete(): void;
  /** Says on `stderr` how to continue and returns the error the run ends with. */
  stopped(cause: unknown, stderr: Pick<NodeJS.WritableStream, 'write'>): unknown;
  /** Lets go of FILE (complete and stopped do; for a run that ends before its walk). */
  release(): void;
}

export interface DumpOptions {
  file: string;
  walk: WalkIdentity;
  restart: boolean;
  /** A FILE that already holds more items is refused, not continued. */
  limit?: number | undefined;
  /** A state's URL elsewhere is refused. */
  apiOrigin: string;
  info: (msg: string) => void;
  now: () => number;
}

const RESTART = 'add --restart to start over';
const restartError = (code: ErrorCode, message: string): IdcliError => usageError(code, message, RESTART);
/** The way past a file beside FILE that idcli cannot remove: --restart would meet it again. */
const ANOTHER_FILE = 'name another file for -o';
const NAME_A_FILE = 'name a file for -o, e.g. users.ndjson';
const OWN_FILE = 'name a file of your own for -o, in a directory only you may write';
/** The longest name put beside FILE: the claim's temp. */
const LONGEST_SUFFIX = CLAIM_TEMP_SUFFIX;
/** The state is replaced after a page at most this often (and when the walk stops): a rename costs more than a page. */
export const STATE_INTERVAL_MS = 100;

/** Checks FILE and its state, claims FILE, and on a resume cuts it to its last whole page: FILE untouched till then. */
export function openDump(opts: DumpOptions): DumpFile {
  const path = checkFile(opts.file);
  const state = statePath(path);
  let release: () => void;
  try {
    release = claimDump(path, opts.file);
  } catch (err) {
    // The claim is the first file created beside FILE: what stops it would stop FILE (the same directory).
    throw ownOrFault(err, { doing: 'create', path: opts.file, dir: path });
  }
  try {
    // The state goes first: FILE written anew under an old state could be taken for the old walk's pages.
    if (opts.restart) removeState(state, ANOTHER_FILE);
    try {
      probeState(state, ANOTHER_FILE);
    } catch (err) {
      throw ownOrFault(err, { doing: 'create', path: state, dir: state });
    }
    const saved = opts.restart ? undefined : loadState(opts, path, state);
    return new Dump(opts, path, state, saved, release);
  } catch (err) {
    release();
    throw err;
  }
}

/** FILE checked by the private-path rule and resolved (links that pass the rule followed). */
function checkFile(file: string): string {
  if (file === '') throw usageError('OUTPUT_NAME_MISSING', '-o needs a file name', `${NAME_A_FILE}, or - for stdout`);
  if (file.endsWith(sep) || file.endsWith('/'))
    throw usageError('OUTPUT_NAME_IS_DIRECTORY', `-o ${file} ends with ${sep}: it names a directory`, NAME_A_FILE);
  let st: Stats | undefined;
  try {
    // Followed: stat never opens, so a FIFO or a device at the end of a link is told without waiting on it.
    // Not throwIfNoEntry: from Node 22 on it also hides ENOTDIR.
    st = statSync(file);
  } catch (err) {
    // A file in the way above FILE (ENOTDIR), or a directory that may not be entered: told before any request.
    if (errCode(err) !== 'ENOENT') throw fsFault(err, { doing: 'create', path: file, dir: file });
  }
  if (st?.isDirectory()) throw usageError('OUTPUT_NAME_IS_DIRECTORY', `${file} is a directory`, NAME_A_FILE);
  if (st !== undefined && !st.isFile())
    throw usageError(
      'PATH_NOT_REGULAR',
      `refusing to use ${file}: it is not a regular file (a FIFO, a device or a socket)`,
      `${OWN_FILE}, or - for stdout`,
    );
  if (st !== undefined) refuseHardLinked(file, st);
  const path = resolveTrusted(file, OWN_FILE);
  for (const name of new Set([file, path])) {
    if (!nameFits(name, LONGEST_SUFFIX)) {
      const room = NAME_MAX - LONGEST_SUFFIX.length;
      throw usageError(
        'OUTPUT_NAME_TOO_LONG',
        `the name ${basename(name)} is too long for -o: the files idcli keeps beside it need ${LONGEST_SUFFIX.length} more bytes of the ${NAME_MAX} a name may have`,
        `use a name of at most ${room} bytes`,
      );
    }
  }
  inspectPrivateFile(path, OWN_FILE);
  return path;
}

/**
 * The claim and the state lie beside a name, so a FILE of several names (hard links) could get a writer and a state
 * for each; a FILE of one name has one of each. One idcli creates has one name.
 */
function refuseHardLinked(file: string, st: Stats): void {
  if (st.nlink > 1)
    throw usageError(
      'OUTPUT_HARD_LINKED',
      `refusing to use ${file}: it has ${st.nlink} names (hard links), and a run on another of them would write it too`,
      'remove its other names, or name another file for -o',
    );
}

function loadState(opts: DumpOptions, path: string, state: string): { state: DumpState; fd: number } | undefined {
  let saved: DumpState | undefined;
  try {
    saved = readState(state);
  } catch (err) {
    const cannot = `cannot continue ${opts.file}: its state ${state} cannot`;
    if (err instanceof StateUnreadable)
      throw restartError('RESUME_STATE_UNUSABLE', `${cannot} be used (${err.message})`);
    const code = errCode(err);
    if (code === undefined) throw err;
    const fault = fsFault(err, { doing: 'read', path: state, dir: state, orElse: `or ${RESTART}` });
    // A state that cannot be read is exit 2 naming --restart, whatever the cause: starting over always gets past it.
    if (fault.exitCode === ExitCode.USAGE) throw fault;
    throw restartError('RESUME_STATE_UNREADABLE', `${cannot} be read (${code})`);
  }
  if (saved === undefined) return undefined;
  const diff = identityDiff(saved.walk, opts.walk);
  if (diff !== undefined)
    throw usageError(
      'RESUME_OTHER_WALK',
      `${opts.file} holds part of another walk: ${diff}`,
      `run that walk's command to continue it, or ${RESTART} with this one`,
    );
  if (!sameOrigin(saved.next, opts.apiOrigin))
    throw restartError(
      'RESUME_OTHER_ORIGIN',
      `cannot continue ${opts.file}: its state ${state} points to another origin`,
    );
  if (opts.limit !== undefined && saved.items > opts.limit)
    throw usageError(
      'RESUME_OVER_LIMIT',
      `${opts.file} already holds ${saved.items} items, more than --limit ${opts.limit}`,
      `run with --limit ${saved.items} or more to continue it, or ${RESTART} with --limit ${opts.limit}`,
    );
  return { state: saved, fd: openForResume(opts.file, path, saved) };
}

/** FILE opened for appending and cut to the state's length, once it proves to be the file the state describes. */
function openForResume(file: string, path: string, saved: DumpState): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | constants.O_APPEND | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    if (errCode(err) === 'ENOENT')
      throw restartError('RESUME_FILE_GONE', `${file} is gone, but its state says it holds ${saved.items} items`);
    throw fsFault(err, { doing: 'open', path: file, dir: file, orElse: `or ${RESTART}` });
  }
  try {
    const st = refuseOpenedFile(fd, file, RESTART);
    refuseHardLinked(file, st);
    if (st.size < saved.bytes)
      throw restartError(
        'RESUME_FILE_CHANGED',
        `${file} is shorter (${st.size} bytes) than its state says (${saved.bytes} bytes)`,
      );
    const tail = Buffer.from(saved.tail, 'hex');
    const got = Buffer.alloc(tail.length);
    if (tail.length > 0) readSync(fd, got, 0, tail.length, saved.bytes - tail.length);
    if (!got.equals(tail))
      throw restartError('RESUME_FILE_CHANGED', `${file} does not end where its state says: it changed since`);
    // The bytes past the last whole page are a page the last run did not finish.
    if (st.size > saved.bytes) ftruncateSync(fd, saved.bytes);
    return fd;
  } catch (err) {
    closeSync(fd);
    throw ownOrFault(err, { doing: 'read', path: file, dir: file, orElse: `or ${RESTART}` });
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
    /** FILE resolved: what is opened, whatever links the user's name went through. */
    private readonly path: string,
    private readonly state: string,
    saved: { state: DumpState; fd: number } | undefined,
    readonly release: () => void,
  ) {
    this.resumedItems = saved?.state.items ?? 0;
    this.resumeUrl = saved?.state.next;
    this.#fd = saved?.fd;
    this.#bytes = saved?.state.bytes ?? 0;
    this.#tail = Buffer.from(saved?.state.tail ?? '', 'hex');
    this.#recorded = saved && { bytes: saved.state.bytes, items: saved.state.items };
    if (saved) opts.info(`idcli: resuming ${opts.file} after ${itemCount(saved.state.items)}`);
    this.writer = {
      closed: false,
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

  /** Created private on the first page, or the user's own FILE overwritten and made private; never through a link. */
  #open(): number {
    if (this.#fd !== undefined) return this.#fd;
    const flags = constants.O_WRONLY | constants.O_APPEND | O_NOFOLLOW | O_NONBLOCK;
    let fd: number | undefined;
    try {
      try {
        fd = openSync(this.path, flags | constants.O_CREAT | constants.O_EXCL, PRIVATE_FILE_MODE);
      } catch (err) {
        if (errCode(err) !== 'EEXIST') throw err;
        fd = openSync(this.path, flags);
        const st = refuseOpenedFile(fd, this.opts.file, OWN_FILE);
        refuseHardLinked(this.opts.file, st);
        if ((st.mode & 0o077) !== 0) fchmodSync(fd, PRIVATE_FILE_MODE);
        ftruncateSync(fd, 0);
      }
    } catch (err) {
      if (fd !== undefined) closeSync(fd);
      // Not yet an output that failed half-way: nothing is written, and the user mends the directory or FILE.
      throw ownOrFault(err, { doing: 'create', path: this.opts.file, dir: this.path });
    }
    this.#fd = fd;
    return fd;
  }

  pageWritten(items: number, rest: string | undefined): void {
    // After the last page nothing is left to continue: the state stays at a page before until complete() removes
    // it, so a run killed in between fetches the rest again.
    if (rest === undefined) return;
    const { walk } = this.opts;
    const tail = this.#tail.toString('hex');
    this.#pending = { walk, next: rest, items: this.resumedItems + items, bytes: this.#bytes, tail };
    if (this.opts.now() - this.#lastReplaced >= STATE_INTERVAL_MS) this.#replaceState();
  }

  /** FILE's bytes the pending state counts are already there. */
  #replaceState(): void {
    const next = this.#pending;
    if (next === undefined) return;
    this.#pending = undefined;
    try {
      writeState(this.state, next);
    } catch (err) {
      // A full disk has no room for the temp, but the state already there has room for one of about its size.
      if (this.#recorded === undefined || !overwrite(this.state, err, next)) {
        // FILE goes back to what the state on disk says, so the two still agree for the next run.
        this.#cutTo(this.#recorded?.bytes ?? 0);
        throw new OutputError(err);
      }
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
    try {
      this.#open();
      removeQuietly(this.state);
    } finally {
      this.#close();
      this.release();
    }
  }

  stopped(cause: unknown, stderr: Pick<NodeJS.WritableStream, 'write'>): unknown {
    let failure: unknown;
    try {
      this.#replaceState();
    } catch (err) {
      failure = err; // the disk that failed the page may refuse the state too: that is the error to report
    }
    const recorded = this.#recorded;
    // FILE ends where its state says, so the stop line's count is FILE's: pages written after the last one the
    // state counts (the page whose link was refused, say) are fetched again by the next run.
    if (recorded !== undefined) this.#cutTo(recorded.bytes);
    this.#close();
    this.release();
    // A broken answer (exit 5) meets the next run again; a failed way to it (exit 4) may not.
    const contract = cause instanceof IdcliError && cause.exitCode === ExitCode.CONTRACT;
    // Before the first state there is nothing to continue: the next run starts over, as this one did.
    if (recorded !== undefined) stderr.write(stoppedDumpMessage(recorded.items, this.opts.file, contract));
    // A 4xx or a broken page on the very URL the state gave: the position may no longer be valid (an expired
    // cursor), and only starting over gets past it.
    const network = cause instanceof IdcliError && cause.exitCode === ExitCode.NETWORK;
    if (this.resumeUrl !== undefined && !this.#wroteThisRun && (network || contract)) {
      const hint = `if the service no longer accepts where the last run stopped, ${RESTART}`;
      return new IdcliError(cause.code, cause.message, cause.exitCode, {
        hint: cause.hint ? `${cause.hint}; ${hint}` : hint,
        cause,
      });
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

/** Whether the state could be written in place after `err` from writeState (see overwriteState). */
function overwrite(state: string, err: unknown, next: DumpState): boolean {
  const code = errCode(err);
  if (code !== 'ENOSPC' && code !== 'EDQUOT') return false;
  try {
    overwriteState(state, next);
    return true;
  } catch {
    return false;
  }
}

/** idcli's own error as it is, any other read as the failed file operation `at`. */
function ownOrFault(err: unknown, at: FsFaultAt): unknown {
  return err instanceof IdcliError ? err : fsFault(err, at);
}

function sameOrigin(url: string, origin: string): boolean {
  return URL.canParse(url) && new URL(url).origin === origin;
}

/**
 * Runs a command in this process through main(), the CLI's seam, the way gh's tests run a command against fake
 * iostreams: stdout and stderr kept in memory (terminals or not, as asked), stdin from a string, the environment
 * given whole (nothing comes from this process's own), a clock the test may drive (test/support/clock.ts), and stop
 * signals the test sends (StopSignals), heard by the CLI's own handling of them once main() takes them over, as a
 * process hears them: one that comes before ends the run as Node's default action ends a process, killed by it, with
 * no exit code and nothing more written. The result has runCli's shape, so a
 * test reads the same stdout, stderr and exit code either way. What a process is the point of (signals from the
 * system, a closed pipe, start-up) stays with runCli.
 */
import { EventEmitter } from 'node:events';
import { PassThrough, type Readable, Writable } from 'node:stream';
import { type Clock, systemClock } from '../../src/clock.js';
import { main, type Process, type StopSignal, stopSignals } from '../../src/cli.js';
import type { CliResult } from './cli.js';

export interface CommandOptions {
  /** The whole environment of the run; baseEnv() gives the usual one. */
  env?: Record<string, string | undefined>;
  /** Also IDCLI_CONFIG_DIR. */
  configDir?: string;
  /** What the command reads on stdin: a string (then end of input), a stream the test writes to; none if not given. */
  stdin?: string | Readable;
  /** Whether stdin, stdout and stderr say they are terminals (default: none is). */
  tty?: { stdin?: boolean; stdout?: boolean; stderr?: boolean };
  /** The clock of the run (the machine's by default). */
  clock?: Clock;
  /** When the process started, on `clock`; the clock's now by default. */
  startedAt?: number;
  /** Aborting it stops the run as a stop signal would, with its reason as the signal's name (default SIGINT). */
  interrupt?: AbortSignal;
  /** Stop signals the test sends, as the system sends them to a process: `signals.send('SIGINT')`, then again. */
  signals?: StopSignals;
  /** Called with each write to stderr as it happens, e.g. to read a URL the command prints while it waits. */
  onStderr?: (text: string) => void;
}

/** The stop signals a test sends to a run in process, each heard as the process hears one from the system. */
export class StopSignals {
  readonly #emitter = new EventEmitter();
  #unheard: ((name: StopSignal) => void) | undefined;

  send(name: StopSignal = 'SIGINT'): void {
    // Nobody listening: the default action, which for a process is to die by the signal.
    if (!this.#emitter.emit(name)) this.#unheard?.(name);
  }

  on(name: StopSignal, listener: () => void): this {
    this.#emitter.on(name, listener);
    return this;
  }

  /** What a signal nobody listens to does to the run (runCommand's); until `clear`. */
  byDefault(action: (name: StopSignal) => void): { clear(): void } {
    this.#unheard = action;
    return { clear: () => void (this.#unheard === action && (this.#unheard = undefined)) };
  }
}

/** A stream that keeps what is written to it. */
class Captured extends Writable {
  readonly chunks: Buffer[] = [];
  isTTY?: boolean;
  columns?: number;

  constructor(
    tty: boolean | undefined,
    private readonly onWrite?: (text: string) => void,
  ) {
    super();
    if (tty) {
      this.isTTY = true;
      this.columns = 80;
    }
  }

  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    // A copy: once told it is written, the writer may reuse its buffer (list's pages come from a pool).
    const bytes = Buffer.from(chunk);
    this.chunks.push(bytes);
    this.onWrite?.(bytes.toString('utf8'));
    done();
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

export async function runCommand(args: string[], opts: CommandOptions = {}): Promise<CliResult> {
  const env = { ...opts.env, ...(opts.configDir !== undefined && { IDCLI_CONFIG_DIR: opts.configDir }) };
  const clock = opts.clock ?? systemClock;
  const stdout = new Captured(opts.tty?.stdout);
  const stderr = new Captured(opts.tty?.stderr, opts.onStderr);
  let stdin: (Readable & { isTTY?: boolean }) | undefined;
  const signals = opts.signals ?? new StopSignals();
  const onInterrupt = (): void => signals.send((opts.interrupt?.reason as StopSignal | undefined) ?? 'SIGINT');
  let ended!: (end: { code: number | null; signal: StopSignal | null }) => void;
  const end = new Promise<{ code: number | null; signal: StopSignal | null }>((resolve) => (ended = resolve));
  const edges = { clock, signals, exit: (code: number) => ended({ code, signal: null }) };
  const stops = stopSignals(edges, (line) => void stderr.write(`${line}\n`));
  // Taken over only when main() asks (src/cli.ts): for a quick command, not before it needs to be.
  const killed = signals.byDefault((signal) => ended({ code: null, signal }));
  if (opts.interrupt?.aborted) onInterrupt();
  else opts.interrupt?.addEventListener('abort', onInterrupt, { once: true });
  const proc: Process = {
    argv: [process.execPath, 'idcli', ...args],
    env,
    stdout,
    stderr,
    stdin() {
      if (stdin) return stdin;
      if (opts.stdin !== undefined && typeof opts.stdin !== 'string') {
        const given: Readable & { isTTY?: boolean } = opts.stdin;
        if (opts.tty?.stdin) given.isTTY = true;
        return (stdin = given);
      }
      const s: PassThrough & { isTTY?: boolean } = new PassThrough();
      if (opts.tty?.stdin) s.isTTY = true;
      s.end(opts.stdin ?? '');
      return (stdin = s);
    },
    ...edges,
    startedAt: opts.startedAt ?? clock.now(),
    print: (text) => void stdout.write(text),
    flush: () => new Promise((resolve) => stdout.write('', () => resolve(undefined))),
    interrupt: stops.interrupt,
    stopped: stops.stopped,
    mustFinish: stops.mustFinish,
    relaySignals: stops.relaySignals,
  };
  try {
    // An exit (a third stop signal, a grace run out) or a signal not taken over ends the run where it is, as
    // process.exit or the signal ends a process.
    const { code, signal } = await Promise.race([main(proc).then((c) => ({ code: c, signal: null })), end]);
    const stdoutBytes = stdout.bytes();
    return {
      code,
      signal,
      stdout: stdoutBytes.toString('utf8'),
      stderr: stderr.bytes().toString('utf8'),
      stdoutBytes,
    };
  } finally {
    killed.clear();
    opts.interrupt?.removeEventListener('abort', onInterrupt);
    stdin?.destroy();
  }
}

/**
 * Runs a command in this process through main(), the CLI's seam, the way gh's tests run a command against fake
 * iostreams: stdout and stderr kept in memory (terminals or not, as asked), stdin from a string, the environment
 * given whole (nothing comes from this process's own), and a clock the test may drive (test/support/clock.ts). The
 * result has runCli's shape, so a test reads the same stdout, stderr and exit code either way. What a process is the
 * point of (signals, a closed pipe, start-up) stays with runCli.
 */
import { PassThrough, type Readable, Writable } from 'node:stream';
import { type Clock, systemClock } from '../../src/clock.js';
import { main, type Process } from '../../src/cli.js';
import type { CliResult } from './cli.js';

export interface CommandOptions {
  /** The whole environment of the run; baseEnv() gives the usual one. */
  env?: Record<string, string | undefined>;
  /** Also IDCLI_CONFIG_DIR. */
  configDir?: string;
  /** What the command reads on stdin; none (end of input at once) if not given. */
  stdin?: string;
  /** Whether stdin, stdout and stderr say they are terminals (default: none is). */
  tty?: { stdin?: boolean; stdout?: boolean; stderr?: boolean };
  /** The clock of the run (the machine's by default). */
  clock?: Clock;
  /** When the process started, on `clock`; the clock's now by default. */
  startedAt?: number;
  /** Aborting it stops the run as a stop signal would, with its reason as the signal's name (default SIGINT). */
  interrupt?: AbortSignal;
  /** Called with each write to stderr as it happens, e.g. to read a URL the command prints while it waits. */
  onStderr?: (text: string) => void;
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
  const stop = new AbortController();
  const onInterrupt = (): void => stop.abort(opts.interrupt?.reason ?? 'SIGINT');
  if (opts.interrupt?.aborted) onInterrupt();
  else opts.interrupt?.addEventListener('abort', onInterrupt, { once: true });
  const proc: Process = {
    argv: [process.execPath, 'idcli', ...args],
    env,
    stdout,
    stderr,
    stdin() {
      if (stdin) return stdin;
      const s: PassThrough & { isTTY?: boolean } = new PassThrough();
      if (opts.tty?.stdin) s.isTTY = true;
      s.end(opts.stdin ?? '');
      return (stdin = s);
    },
    clock,
    startedAt: opts.startedAt ?? clock.now(),
    print: (text) => void stdout.write(text),
    interrupt: () => stop.signal,
    flush: () => new Promise((resolve) => stdout.write('', () => resolve(undefined))),
    stopped: () => stop.signal.aborted,
    mustFinish: async (_task, work) => work(),
  };
  try {
    const code = await main(proc);
    const stdoutBytes = stdout.bytes();
    return {
      code,
      signal: null,
      stdout: stdoutBytes.toString('utf8'),
      stderr: stderr.bytes().toString('utf8'),
      stdoutBytes,
    };
  } finally {
    opts.interrupt?.removeEventListener('abort', onInterrupt);
    stdin?.destroy();
  }
}

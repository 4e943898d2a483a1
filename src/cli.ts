/** The entry point: argv → command, the one place where errors become exit codes, the only module touching `process`. */
import { fstatSync, writeSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { type Clock, systemClock, type Timer } from './clock.js';
import { createFileOutput } from './output/file-output.js';
import { parseArgv } from './argv/parse.js';
import { type CommandSpec, loadAll } from './argv/define.js';
import { SURFACE } from './commands/index.js';
import { SETTINGS, settingFlags, settingsSource } from './config.js';
import { loadConfigFile } from './config-file.js';
import type { CommandContext } from './context.js';
import type { Deps, UnabandonableTask } from './deps.js';
import { ExitCode, ExitStatus, IdcliError, interrupted, OutputError, outputError, usageError } from './errors.js';
import { createLogger } from './log.js';
import { printable } from './printable.js';
import { redactLine } from './redact.js';
import { stderrStyle, type Style } from './style.js';
import { openTokenSource } from './oauth/credentials.js';
import { errCode, errMessage } from './shape.js';

declare const IDCLI_VERSION: string;
const VERSION = typeof IDCLI_VERSION === 'string' ? IDCLI_VERSION : '0.0.0-dev';

/** The process as main() sees it; run() creates the streams and the signal handlers on first use (start-up time). */
export interface Process {
  argv: string[];
  env: Record<string, string | undefined>;
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Created on first use, like the other streams: a command that reads no input never touches it. */
  stdin(): Readable & { isTTY?: boolean };
  /** The clock of every rule about time in the run, the grace of a second stop signal too. */
  clock: Clock;
  /** Where the stop signals come from: `process` in a real run, what a test sends in process. */
  readonly signals: SignalSource;
  /** Ends the run at once with `code`, whatever is still running: a third stop signal, a grace run out. */
  exit(code: number): void;
  /** When the process started (epoch ms, on `clock`): what a concurrent run did while this one was loading counts too. */
  startedAt: number;
  print(text: string): void;
  /** Takes over SIGINT, SIGTERM and SIGHUP (on the first call); the signal's `reason` is the one that came. */
  interrupt(): AbortSignal;
  /** Resolves once stdout holds all that was written, with the write error (never EPIPE); a stop ends the wait. */
  flush?(): Promise<unknown>;
  stopped?(): boolean;
  /** Deps.mustFinish: `work` outlives the first stop signal, and a second one by FINISH_GRACE_MS at most. */
  mustFinish?<T>(task: UnabandonableTask, work: () => Promise<T>): Promise<T>;
  /** Invocation.relaySignals: until the returned function is called, each stop signal goes to `to` instead. */
  relaySignals?(to: (signal: StopSignal) => void): () => void;
}

/** How long a finished run may take to wind down by itself before it is made to exit. */
const EXIT_GRACE_MS = 500;
/** How long a second stop signal waits for work that must not be abandoned: Ctrl-C pressed twice wants out soon. */
const FINISH_GRACE_MS = 5_000;

/** The process signals handled like Ctrl-C, with the exit code of each. */
const STOP_SIGNALS = { SIGINT: ExitCode.INTERRUPTED, SIGTERM: ExitCode.TERMINATED, SIGHUP: ExitCode.HANGUP } as const;
export type StopSignal = keyof typeof STOP_SIGNALS;

/** What stop signals are heard on: `process.on`, or an emitter a test sends them through. */
export interface SignalSource {
  on(name: StopSignal, listener: () => void): unknown;
}

export async function main(proc: Process): Promise<number> {
  let style: Style | undefined;
  const styled = () => (style ??= stderrStyle(proc.stderr, proc.env));
  let deps: Deps | undefined;
  try {
    const parsed = await parseArgv(proc.argv.slice(2), SURFACE);
    if (parsed.kind === 'version' || parsed.kind === 'help') {
      proc.print(parsed.kind === 'version' ? `${VERSION}\n` : await helpPage(parsed.path));
      await flushed(proc);
      return ExitCode.OK;
    }
    const { globals, options, command } = parsed;
    if (globals.verbose && globals.quiet)
      throw usageError('USAGE_CONFLICTING_OPTIONS', '--verbose and --quiet cannot be used together');
    const log = createLogger(
      { write: (s: string) => proc.stderr.write(s) },
      {
        verbose: globals.verbose === true,
        quiet: globals.quiet === true,
        get warnPrefix() {
          return styled().warn('warning:');
        },
      },
    );
    // Known before any command runs, so no line can show it, whether or not the command uses it.
    log.addSecret(proc.env[SETTINGS['access-token'].env]);
    // Getters, so a command that never touches a stream or the signal never creates it.
    const d: Deps = {
      env: proc.env,
      get stdout() {
        return proc.stdout;
      },
      get stderr() {
        return proc.stderr;
      },
      print: (text) => proc.print(text),
      log,
      now: () => proc.clock.now(),
      clock: proc.clock,
      startedAt: proc.startedAt,
      get signal() {
        return proc.interrupt();
      },
      mustFinish: (task, work) => (proc.mustFinish ? proc.mustFinish(task, work) : work()),
    };
    // A command that may wait on the network or a person takes Ctrl-C over before it starts.
    if (!command.quick) proc.interrupt();
    deps = d;
    const flags = { ...settingFlags(SURFACE.globals, globals), ...settingFlags(command.options, options) };
    const settings = settingsSource(flags, proc.env, loadConfigFile);
    const context = async (): Promise<CommandContext> => {
      const base = { deps: d, settings: await settings.load({ warn: (msg) => log.warn(msg) }) };
      return { ...base, tokens: () => openTokenSource(base) };
    };
    const relaySignals = (to: (signal: StopSignal) => void) => proc.relaySignals?.(to) ?? (() => {});
    await command.run(parsed, {
      deps: d,
      context,
      settings,
      stdin: () => proc.stdin(),
      surface: SURFACE,
      relaySignals,
    });
    await flushed(proc);
    // A stop signal that cut the last wait for the reader short left the output incomplete: not a success.
    if (proc.stopped?.()) throw interrupted();
    return ExitCode.OK;
  } catch (err) {
    // Lost output outranks what the command said after writing it (failed `doctor` checks): stdout's reader must know.
    const failure = err instanceof OutputError ? undefined : await proc.flush?.();
    return report(failure === undefined ? err : outputError(failure), proc, styled(), deps);
  }
}

/** Loaded only when asked: every run compiles what the entry imports, and bin/ answers `idcli --help` itself. */
async function helpPage(path: readonly CommandSpec[]): Promise<string> {
  const { commandHelp, rootHelp } = await import('./argv/help.js');
  if (path.length) return commandHelp(path, SURFACE.globals);
  return rootHelp(VERSION, SURFACE.globals, await loadAll(SURFACE, { hidden: false }));
}

/** Success only once stdout really holds the output: a full disk found at the last write is still a failure. */
async function flushed(proc: Process): Promise<void> {
  const failure = await proc.flush?.();
  if (failure !== undefined) throw outputError(failure);
}

function report(err: unknown, proc: Process, style: Style, deps: Deps | undefined): number {
  const stop = proc.interrupt();
  // Aborted only by onSignal, with the signal's name.
  if (stop.aborted) return STOP_SIGNALS[stop.reason as StopSignal] ?? ExitCode.INTERRUPTED;
  if (err instanceof ExitStatus) return err.status;
  // Redacted like the logger's lines: a URL in the message may carry the access token, a signature or a password.
  const shown = (msg: string) => printable(deps ? deps.log.redact(msg) : redactLine(msg));
  const line = (msg: string) => proc.stderr.write(`${style.error('error:')} ${shown(msg)}\n`);
  if (err instanceof IdcliError) {
    line(err.hint ? `${err.message}; ${err.hint}` : err.message);
    return err.exitCode;
  }
  line(`unexpected internal error: ${errMessage(err)}`);
  // The kind of error helps a bug report; a stack trace never reaches the user (docs/cli.md, "Streams"), not even here.
  deps?.log.verbose(`(${err instanceof Error ? err.name : typeof err})`);
  return ExitCode.INTERNAL;
}

export function run(): void {
  let stdout: (NodeJS.WritableStream & Writable & { isTTY?: boolean }) | undefined;
  let writeFailure: unknown;
  let stderrGuarded = false;
  const edges = { clock: systemClock, signals: process, exit: (code: number) => process.exit(code) };
  const stops = stopSignals(edges, (line) => void proc.stderr.write(`${line}\n`));
  const proc: Process = {
    argv: process.argv,
    env: process.env,
    stdin: () => process.stdin,
    ...edges,
    // The process's start, not main()'s: what a concurrent run did while this one was loading counts too.
    // eslint-disable-next-line no-restricted-properties -- the edge: where the machine's clock becomes the run's.
    startedAt: Date.now() - Math.round(process.uptime() * 1000),
    get stdout() {
      if (stdout) return stdout;
      stdout = isRegularFile(1) ? createFileOutput(1) : process.stdout;
      // The reader went away (`idcli list … | head`): that is success, not a crash (docs/cli.md, "Exit codes").
      // Any other write error is a failure, told by flush() once the command is done.
      stdout.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'EPIPE') process.exit(ExitCode.OK);
        writeFailure ??= err;
      });
      return stdout;
    },
    get stderr() {
      // Messages are best effort: a stderr that cannot be written (`2>/dev/full`, a terminal that went away) must
      // neither change the exit code nor stop the data on stdout, and its 'error' must not crash the run.
      if (!stderrGuarded) {
        stderrGuarded = true;
        process.stderr.on('error', () => {});
      }
      return process.stderr;
    },
    print(text) {
      if (stdout) return void stdout.write(text);
      writeFailure ??= printSync(text, () => proc.stdout);
    },
    interrupt: stops.interrupt,
    flush() {
      const stop = stops.signal;
      return new Promise((resolve) => {
        // setImmediate: a failed synchronous write (a file on a full disk) reports its 'error' on the next tick.
        const done = (): void => void setImmediate(() => resolve(writeFailure));
        if (!stdout || stdout.destroyed || stdout.writableLength === 0 || stop?.aborted) return done();
        stdout.write('', done);
        stop?.addEventListener('abort', done, { once: true });
      });
    },
    stopped: stops.stopped,
    mustFinish: stops.mustFinish,
    relaySignals: stops.relaySignals,
  };
  main(proc)
    .then(async (code) => {
      process.exitCode = code;
      await proc.flush!();
      end(code);
    })
    .catch((err: unknown) => {
      // main() reports every failure itself; this is the last resort should its report or the final flush throw.
      // It still ends with one line and the internal error's exit code, not Node's stack trace.
      proc.stderr.write(`error: unexpected internal error: ${printable(redactLine(errMessage(err)))}\n`);
      process.exitCode = ExitCode.INTERNAL;
      end(ExitCode.INTERNAL);
    });
}

/**
 * The run ends when nothing is left to wait for. process.exit() stops the platform's threads while the isolate lives,
 * and on Node 24 it can hang for good when a background compile job waits for a garbage collection then
 * (nodejs/node#54918, #64274). Only what cannot be abandoned still holds the process after a moment: a keychain call
 * cut by its timeout, a write to a reader that stopped reading. Then it leaves anyway.
 */
function end(code: number): void {
  // eslint-disable-next-line no-restricted-globals -- the process's own end, after every run's clock has stopped.
  setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
}

/**
 * The stop signals of `proc`, taken over on the first `interrupt`, and the work that must finish before they stop the
 * run: what run() and a test's run in process (test/support/run-command.ts) both stop by.
 */
export function stopSignals(
  { clock, signals, exit }: Pick<Process, 'clock' | 'signals' | 'exit'>,
  say: (line: string) => void,
): Required<Pick<Process, 'interrupt' | 'stopped' | 'mustFinish' | 'relaySignals'>> & {
  readonly signal: AbortSignal | undefined;
} {
  let controller: AbortController | undefined;
  const unfinished = new Set<UnabandonableTask>();
  let grace: Timer | undefined;
  let relay: ((signal: StopSignal) => void) | undefined;
  const interrupt = (): AbortSignal => {
    if (controller) return controller.signal;
    const c = (controller = new AbortController());
    // SIGTERM and SIGHUP end the run like Ctrl-C; a second leaves at once, or in a refresh waits FINISH_GRACE_MS.
    const onSignal = (name: StopSignal): void => {
      if (relay) return relay(name);
      const [task] = unfinished;
      const key = name === 'SIGINT' ? 'Ctrl-C' : name;
      if (!c.signal.aborted) {
        c.abort(name);
        if (task)
          say(
            `idcli: finishing ${task.what} before stopping; a second ${key} waits ${FINISH_GRACE_MS / 1000} s more at most, then stops and loses ${task.loses}`,
          );
      } else if (task && grace === undefined) {
        say(`idcli: waiting ${FINISH_GRACE_MS / 1000} s at most for ${task.what} to finish; a third ${key} stops now`);
        grace = clock.setTimeout(() => {
          say(`error: stopped before ${task.what} finished, which may have lost ${task.loses}; ${task.fix}`);
          exit(STOP_SIGNALS[name]);
        }, FINISH_GRACE_MS);
      } else exit(STOP_SIGNALS[name]);
    };
    // Object.keys loses the key type.
    for (const name of Object.keys(STOP_SIGNALS) as StopSignal[]) signals.on(name, () => onSignal(name));
    return c.signal;
  };
  return {
    get signal() {
      return controller?.signal;
    },
    interrupt,
    stopped: () => controller?.signal.aborted === true,
    relaySignals(to) {
      interrupt();
      relay = to;
      return () => {
        if (relay === to) relay = undefined;
      };
    },
    async mustFinish(task, work) {
      // Taken over now if not yet, so that no signal during the work finds Node's default (to die at once).
      const stop = interrupt();
      if (stop.aborted) throw interrupted();
      unfinished.add(task);
      try {
        const result = await work();
        // Finished and kept: now the run stops as asked.
        if (stop.aborted) throw interrupted();
        return result;
      } finally {
        unfinished.delete(task);
        if (unfinished.size === 0) {
          grace?.clear();
          grace = undefined;
        }
      }
    },
  };
}

/** Writes straight to fd 1; returns the failure, EPIPE being none. A full pipe (EAGAIN) takes the rest as a stream. */
function printSync(text: string, stream: () => NodeJS.WritableStream): unknown {
  const bytes = Buffer.from(text, 'utf8');
  let done = 0;
  try {
    while (done < bytes.length) done += writeSync(1, bytes, done);
  } catch (err) {
    const code = errCode(err);
    if (code === 'EAGAIN') stream().write(bytes.subarray(done));
    else if (code !== 'EPIPE') return err;
  }
  return undefined;
}

function isRegularFile(fd: number): boolean {
  try {
    return fstatSync(fd).isFile();
  } catch {
    return false;
  }
}

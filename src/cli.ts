/**
 * The entry point: argv → command, the one place where errors become exit codes, and the only module that
 * touches `process`. Command bodies are imported lazily so `idcli token` does not pay for `list` or `login`.
 */
import { fstatSync, writeSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { createFileOutput } from './output/file-output.js';
import { commandHelp, rootHelp } from './argv/help.js';
import { parseArgv, type Values } from './argv/parse.js';
import { configDirFor, loadConfigFile, resolveSettings, type SettingFlags } from './config.js';
import type { CommandContext } from './context.js';
import type { Deps } from './deps.js';
import { ExitCode, type ExitCodeValue, IdcliError, OutputError, outputError, usageError } from './errors.js';
import { createLogger } from './log.js';
import { printable } from './printable.js';
import { stderrStyle, type Style } from './style.js';
import { openTokenSource } from './tokens.js';
// The one command imported up front: scripts run `idcli token` before every API call, so its cached-token path
// lives in the entry chunk instead of costing extra module loads.
import { runToken } from './commands/token.js';

declare const IDCLI_VERSION: string;
const VERSION = typeof IDCLI_VERSION === 'string' ? IDCLI_VERSION : '0.0.0-dev';

/**
 * The process as main() sees it. run() creates the streams and the SIGINT handler on first use: each costs start-up
 * time (the stream modules, a signal watcher) that `idcli token` with a cached token never needs.
 */
export interface Process {
  argv: string[];
  env: Record<string, string | undefined>;
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Writes a short, complete text to stdout (after anything already written to the stream). */
  print(text: string): void;
  /**
   * Takes over SIGINT, SIGTERM and SIGHUP (on the first call) and returns the signal they abort; its `reason` is
   * the name of the process signal that came.
   */
  interrupt(): AbortSignal;
  /**
   * Resolves once stdout holds everything written to it, with the write error (never EPIPE) if there was one.
   * A stop signal ends the wait: what a reader has not taken by then is given up, as the user asked to stop.
   * Optional: a caller whose stdout cannot fail (the build rendering the help page into a string) leaves it out.
   */
  flush?(): Promise<unknown>;
  /** Whether a stop signal came; false while none was taken over. */
  stopped?(): boolean;
}

/** How long a finished run may take to wind down by itself before it is made to exit. */
const EXIT_GRACE_MS = 500;

/** The process signals handled like Ctrl-C, with the exit code each one ends the run with. */
const STOP_SIGNALS = { SIGINT: ExitCode.INTERRUPTED, SIGTERM: ExitCode.TERMINATED, SIGHUP: ExitCode.HANGUP } as const;
type StopSignal = keyof typeof STOP_SIGNALS;

interface Invocation {
  args: string[];
  options: Values;
  deps: Deps;
  /** Resolves settings (flag > env > config file > default); throws a usage error for invalid ones. */
  context: () => Promise<CommandContext>;
  proc: Process;
  globals: Values;
}

const str = (v: Values[string]) => (typeof v === 'string' ? v : undefined);
const int = (v: Values[string]) => (typeof v === 'number' ? v : undefined);
const list = (v: Values[string]) => (Array.isArray(v) ? v : []);

/** Each command: its module loads only when it runs. */
const HANDLERS: Record<string, (inv: Invocation) => Promise<void>> = {
  async login({ options: o, context }) {
    const { runLogin } = await import('./commands/login.js');
    const prompt = str(o.prompt) as 'none' | 'login' | 'create' | undefined;
    await runLogin(
      {
        ...(prompt ? { prompt } : {}),
        ...(str(o.loginHint) ? { loginHint: str(o.loginHint)! } : {}),
        browser: o.browser !== false,
        timeoutSec: int(o.timeout)!,
      },
      await context(),
    );
  },
  async token({ options: o, context }) {
    await runToken(
      { refresh: o.refresh === true, json: o.json === true, header: o.header === true, minTtlSec: int(o.minTtl)! },
      await context(),
    );
  },
  async api({ args, options: o, context }) {
    const { runApi } = await import('./commands/api.js');
    await runApi(
      {
        target: args[0]!,
        method: str(o.method),
        headers: list(o.header),
        fields: list(o.field),
        input: str(o.input),
        include: o.include === true,
        maxRetries: int(o.maxRetries)!,
      },
      await context(),
      { stdin: () => process.stdin },
    );
  },
  async list({ args, options: o, context }) {
    const { runList } = await import('./commands/list.js');
    await runList(
      {
        target: args[0]!,
        pageSize: int(o.pageSize),
        pageIndex: int(o.pageIndex),
        limit: int(o.limit),
        concurrency: o.concurrency === 'auto' ? 'auto' : int(o.concurrency)!,
        count: o.count === true,
        maxRetries: int(o.maxRetries)!,
      },
      await context(),
    );
  },
  async status({ options: o, context }) {
    const { runStatus } = await import('./commands/status.js');
    await runStatus({ json: o.json === true }, await context());
  },
  async logout({ context }) {
    const { runLogout } = await import('./commands/logout.js');
    await runLogout(await context());
  },
  async 'config set'(inv) {
    const { configSet } = await import('./commands/config.js');
    await configSet(inv.args[0]!, inv.args[1]!, configTarget(inv));
  },
  async 'config get'(inv) {
    const { configGet } = await import('./commands/config.js');
    await configGet(inv.args[0]!, configTarget(inv));
  },
  async 'config unset'(inv) {
    const { configUnset } = await import('./commands/config.js');
    await configUnset(inv.args[0]!, configTarget(inv));
  },
  async 'config list'(inv) {
    const { configList } = await import('./commands/config.js');
    await configList(configTarget(inv));
  },
  async doctor({ options: o, deps, context }) {
    const { runDoctor } = await import('./commands/doctor.js');
    // Doctor reports a broken configuration as a failed check, so it resolves the context itself.
    await runDoctor({ json: o.json === true }, deps, context);
  },
  async completion({ args, proc }) {
    const { completionScript } = await import('./commands/completion.js');
    proc.stdout.write(completionScript(args[0] as 'bash' | 'zsh' | 'fish'));
  },
  async __profiles({ proc }) {
    // Completion runs this on every Tab: a warning there would break the shell's line.
    const file = await loadConfigFile(configDirFor(proc.env));
    for (const name of Object.keys(file.profiles)) proc.stdout.write(`${name}\n`);
  },
};

function configTarget({ proc, globals, deps }: Invocation) {
  return {
    configDir: configDirFor(proc.env),
    warn: (msg: string) => deps.log.warn(msg),
    flags: { profile: str(globals.profile) } as SettingFlags,
    env: proc.env,
    stdout: proc.stdout,
  };
}

function settingFlags(globals: Values, options: Values): SettingFlags {
  const flags: SettingFlags = {};
  for (const key of ['profile', 'baseUrl', 'clientId', 'clientName', 'redirectUri', 'apiBaseUrl'] as const) {
    const v = str(globals[key]);
    if (v !== undefined) flags[key] = v;
  }
  // login's --scope and --ui-locales are settings too (cli-contract "Configuration").
  if (str(options.scope) !== undefined) flags.scope = str(options.scope)!;
  if (str(options.uiLocales) !== undefined) flags.uiLocales = str(options.uiLocales)!;
  return flags;
}

/** Runs the CLI and returns the exit code; never throws. */
export async function main(proc: Process): Promise<number> {
  let style: Style | undefined;
  const styled = () => (style ??= stderrStyle(proc.stderr, proc.env));
  let deps: Deps | undefined;
  try {
    const parsed = parseArgv(proc.argv.slice(2));
    if (parsed.kind === 'version' || parsed.kind === 'help') {
      proc.print(
        parsed.kind === 'version' ? `${VERSION}\n` : parsed.path.length ? commandHelp(parsed.path) : rootHelp(VERSION),
      );
      await flushed(proc);
      return ExitCode.OK;
    }
    const { globals, options } = parsed;
    if (globals.verbose && globals.quiet) throw usageError('--verbose and --quiet cannot be used together');
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
      now: Date.now,
      // The process's start, not this line's: what a concurrent run did while this one was loading counts too.
      startedAt: Date.now() - Math.round(process.uptime() * 1000),
      get signal() {
        return proc.interrupt();
      },
    };
    const command = parsed.path.map((c) => c.name).join(' ');
    // Every command but `token` may wait on the network or a person, so Ctrl-C is taken over before it starts
    // (exit 130, no partial output). A cached token is printed within milliseconds; a refresh takes Ctrl-C over
    // when it asks for the lock, before anything is sent or written.
    if (command !== 'token') proc.interrupt();
    deps = d;
    const context = async (): Promise<CommandContext> => {
      const file = await loadConfigFile(configDirFor(proc.env), { warn: (msg) => log.warn(msg) });
      const settings = resolveSettings(settingFlags(globals, options), proc.env, file);
      const base = { deps: d, settings };
      return { ...base, tokens: () => openTokenSource(base) };
    };
    const handler = HANDLERS[command]!;
    await handler({ args: parsed.args, options, deps: d, context, proc, globals });
    await flushed(proc);
    // A stop signal that cut the last wait for the reader short left the output incomplete: not a success.
    if (proc.stopped?.()) throw new IdcliError('interrupted', ExitCode.INTERRUPTED);
    return ExitCode.OK;
  } catch (err) {
    // Output that was lost outranks what the command said after writing it (`doctor` with failed checks, `status`
    // when signed out): the reader of stdout must know it is not there.
    const failure = err instanceof OutputError ? undefined : await proc.flush?.();
    return report(failure === undefined ? err : outputError(failure), proc, styled(), deps);
  }
}

/** Success only once stdout really holds the output: a full disk found at the last write is still a failure. */
async function flushed(proc: Process): Promise<void> {
  const failure = await proc.flush?.();
  if (failure !== undefined) throw outputError(failure);
}

function report(err: unknown, proc: Process, style: Style, deps: Deps | undefined): number {
  const stop = proc.interrupt();
  if (stop.aborted) return STOP_SIGNALS[stop.reason as StopSignal] ?? ExitCode.INTERRUPTED;
  const line = (msg: string) => proc.stderr.write(`${style.error('error:')} ${printable(msg)}\n`);
  if (err instanceof IdcliError) {
    line(err.hint ? `${err.message}; ${err.hint}` : err.message);
    return err.exitCode;
  }
  line(`unexpected internal error: ${(err as Error)?.message ?? String(err)}`);
  // The kind of error helps a bug report; a stack trace never reaches the user (cli-contract), not even here.
  deps?.log.verbose(`(${(err as Error)?.name ?? typeof err})`);
  return ExitCode.INTERNAL;
}

/** Wires the real process into `main`; the only caller is bin/idcli.cjs. */
export function run(): void {
  let controller: AbortController | undefined;
  let stdout: (NodeJS.WritableStream & Writable & { isTTY?: boolean }) | undefined;
  let writeFailure: unknown;
  let stderrGuarded = false;
  const proc: Process = {
    argv: process.argv,
    env: process.env,
    get stdout() {
      if (stdout) return stdout;
      stdout = isRegularFile(1) ? createFileOutput(1) : process.stdout;
      // The reader went away (`idcli list … | head`): that is success, not a crash (cli-contract "Streams and exit codes").
      // Any other write error is a failure, told by flush() once the command is done.
      stdout.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'EPIPE') process.exit(ExitCode.OK);
        writeFailure ??= err;
      });
      return stdout;
    },
    get stderr() {
      if (!stderrGuarded) {
        stderrGuarded = true;
        // Messages are best effort: a stderr that cannot be written (`2>/dev/full`, a terminal that went away) must
        // neither change the exit code nor stop the data on stdout, and its 'error' must not crash the run.
        process.stderr.on('error', () => {});
      }
      return process.stderr;
    },
    print(text) {
      if (stdout) stdout.write(text);
      else {
        try {
          printSync(text, () => proc.stdout);
        } catch (err) {
          writeFailure ??= err;
        }
      }
    },
    interrupt() {
      if (controller) return controller.signal;
      const c = (controller = new AbortController());
      // CI runners cancel with SIGTERM and a closed terminal sends SIGHUP: both end the run like Ctrl-C, between
      // pages, with the resume hint. A second signal of any kind leaves at once, whatever is still pending.
      const onSignal = (name: StopSignal): void => {
        if (!c.signal.aborted) c.abort(name);
        else process.exit(STOP_SIGNALS[name]);
      };
      for (const name of Object.keys(STOP_SIGNALS) as StopSignal[]) process.on(name, onSignal);
      return c.signal;
    },
    flush() {
      const out = stdout;
      const stop = controller?.signal;
      return new Promise((resolve) => {
        // setImmediate: a failed synchronous write (a file on a full disk) reports its 'error' on the next tick.
        const done = (): void => void setImmediate(() => resolve(writeFailure));
        if (!out || out.destroyed || out.writableLength === 0 || stop?.aborted) return done();
        out.write('', done);
        stop?.addEventListener('abort', done, { once: true });
      });
    },
    stopped: () => controller?.signal.aborted === true,
  };
  main(proc).then(async (code: ExitCodeValue | number) => {
    process.exitCode = code;
    await proc.flush!();
    // The run ends when nothing is left to wait for. process.exit() stops the platform's threads while the isolate
    // lives, and on Node 24 it can hang for good when a background compile job waits for a garbage collection then
    // (nodejs/node#54918, #64274). Only what cannot be abandoned still holds the process after a moment: a keychain
    // call cut by its timeout, a write to a reader that stopped reading. Then it leaves anyway.
    setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
  });
}

/**
 * Writes straight to fd 1, as `idcli --version` does in bin/idcli.cjs. A pipe that is full and non-blocking (EAGAIN)
 * takes the rest through the stream; a reader that went away (EPIPE) is not an error.
 */
function printSync(text: string, stream: () => NodeJS.WritableStream): void {
  const bytes = Buffer.from(text, 'utf8');
  let done = 0;
  try {
    while (done < bytes.length) done += writeSync(1, bytes, done);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EAGAIN') stream().write(bytes.subarray(done));
    else if (code !== 'EPIPE') throw err;
  }
}

function isRegularFile(fd: number): boolean {
  try {
    return fstatSync(fd).isFile();
  } catch {
    return false;
  }
}

/**
 * The entry point: argv → command, the one place where errors become exit codes, and the only module that
 * touches `process`. Command bodies are imported lazily so `idcli token` does not pay for `list` or `login`.
 */
import { commandHelp, rootHelp } from './argv/help.js';
import { parseArgv, type Values } from './argv/parse.js';
import { configDirFor, loadConfigFile, resolveSettings, type SettingFlags } from './config.js';
import type { CommandContext } from './context.js';
import type { Deps } from './deps.js';
import { ExitCode, IdcliError, usageError } from './errors.js';
import { createLogger } from './log.js';
import { stderrStyle, type Style } from './style.js';
import { openTokenSource } from './tokens.js';

declare const IDCLI_VERSION: string;
const VERSION = typeof IDCLI_VERSION === 'string' ? IDCLI_VERSION : '0.0.0-dev';

export interface Process {
  argv: string[];
  env: Record<string, string | undefined>;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  signal: AbortSignal;
}

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

/** Each command: its module loads only when it runs. */
const HANDLERS: Record<string, (inv: Invocation) => Promise<void>> = {
  async login({ options: o, context }) {
    const { runLogin } = await import('./commands/login.js');
    const prompt = str(o.prompt) as 'none' | 'login' | 'create' | undefined;
    await runLogin(
      { ...(prompt ? { prompt } : {}), ...(str(o.loginHint) ? { loginHint: str(o.loginHint)! } : {}), browser: o.browser !== false, timeoutSec: int(o.timeout)! },
      await context(),
    );
  },
  async token({ options: o, context }) {
    const { runToken } = await import('./commands/token.js');
    await runToken({ refresh: o.refresh === true, json: o.json === true, minTtlSec: int(o.minTtl)! }, await context());
  },
  async list({ args, options: o, context }) {
    const { runList } = await import('./commands/list.js');
    await runList(
      {
        target: args[0]!,
        pageSize: int(o.pageSize),
        pageIndex: int(o.pageIndex),
        limit: int(o.limit),
        concurrency: int(o.concurrency),
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
    const file = await loadConfigFile(configDirFor(proc.env));
    for (const name of Object.keys(file.profiles)) proc.stdout.write(`${name}\n`);
  },
};

function configTarget({ proc, globals }: Invocation) {
  return { configDir: configDirFor(proc.env), flags: { profile: str(globals.profile) } as SettingFlags, env: proc.env, stdout: proc.stdout };
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
  const style = stderrStyle(proc.stderr, proc.env);
  let deps: Deps | undefined;
  try {
    const parsed = parseArgv(proc.argv.slice(2));
    if (parsed.kind === 'version') {
      proc.stdout.write(`${VERSION}\n`);
      return ExitCode.OK;
    }
    if (parsed.kind === 'help') {
      proc.stdout.write(parsed.path.length ? commandHelp(parsed.path) : rootHelp(VERSION));
      return ExitCode.OK;
    }
    const { globals, options } = parsed;
    if (globals.verbose && globals.quiet) throw usageError('--verbose and --quiet cannot be used together');
    const log = createLogger(proc.stderr, { verbose: globals.verbose === true, quiet: globals.quiet === true, warnPrefix: style.warn('warning:') });
    const d: Deps = { env: proc.env, stdout: proc.stdout, stderr: proc.stderr, log, now: Date.now, signal: proc.signal };
    deps = d;
    const context = async (): Promise<CommandContext> => {
      const file = await loadConfigFile(configDirFor(proc.env));
      const settings = resolveSettings(settingFlags(globals, options), proc.env, file);
      const base = { deps: d, settings };
      return { ...base, tokens: () => openTokenSource(base) };
    };
    const handler = HANDLERS[parsed.path.map((c) => c.name).join(' ')]!;
    await handler({ args: parsed.args, options, deps: d, context, proc, globals });
    return ExitCode.OK;
  } catch (err) {
    return report(err, proc, style, deps);
  }
}

function report(err: unknown, proc: Process, style: Style, deps: Deps | undefined): number {
  if (proc.signal.aborted) return ExitCode.INTERRUPTED;
  const line = (msg: string) => proc.stderr.write(`${style.error('error:')} ${msg}\n`);
  if (err instanceof IdcliError) {
    line(err.hint ? `${err.message}; ${err.hint}` : err.message);
    return err.exitCode;
  }
  line(`unexpected internal error: ${(err as Error)?.message ?? String(err)}`);
  deps?.log.verbose(String((err as Error)?.stack ?? err));
  return ExitCode.INTERNAL;
}

/** Wires the real process into `main`; the only caller is bin/idcli.js. */
export function run(): void {
  const controller = new AbortController();
  process.once('SIGINT', () => {
    controller.abort();
    // A second Ctrl-C leaves at once, whatever is still pending.
    process.once('SIGINT', () => process.exit(ExitCode.INTERRUPTED));
  });
  // The reader went away (`idcli list … | head`): that is success, not a crash (cli-contract "Streams and exit codes").
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(ExitCode.OK);
  });
  main({ argv: process.argv, env: process.env, stdout: process.stdout, stderr: process.stderr, signal: controller.signal }).then(
    (code) => {
      // Exit explicitly: a keychain call cut by its timeout may still hold a worker thread that would keep us alive.
      process.exitCode = code;
      if (process.stdout.writableLength === 0) process.exit(code);
      else process.stdout.once('drain', () => process.exit(code));
    },
  );
}

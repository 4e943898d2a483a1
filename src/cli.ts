/**
 * The entry point: the commander program, the global options, and the one place where errors become exit codes
 * and where `process` is touched. Command bodies are imported lazily so `idcli token` does not pay for `list`.
 */
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { CONFIG_KEYS, loadConfigFile, configDirFor, resolveSettings, type SettingFlags } from './config.js';
import type { CommandContext } from './context.js';
import type { Deps } from './deps.js';
import { ExitCode, IdcliError, usageError } from './errors.js';
import { createLogger } from './log.js';
import { openTokenSource } from './tokens.js';
import { stderrStyle } from './style.js';

declare const IDCLI_VERSION: string;
const VERSION = typeof IDCLI_VERSION === 'string' ? IDCLI_VERSION : '0.0.0-dev';

export interface Process {
  argv: string[];
  env: Record<string, string | undefined>;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  signal: AbortSignal;
}

interface GlobalOpts {
  profile?: string;
  baseUrl?: string;
  clientId?: string;
  clientName?: string;
  redirectUri?: string;
  apiBaseUrl?: string;
  scope?: string;
  uiLocales?: string;
  verbose?: boolean;
  quiet?: boolean;
}

const GLOBAL_HELP = `
Global options (before or after the command):
  --profile <name>        profile to use (env IDCLI_PROFILE, default "default")
  --base-url <url>        identity service base URL (env IDCLI_BASE_URL)
  --client-id <uuid>      registered application id (env IDCLI_CLIENT_ID)
  --client-name <name>    registered client name, sent in scope (env IDCLI_CLIENT_NAME)
  --redirect-uri <url>    registered loopback callback (env IDCLI_REDIRECT_URI)
  --api-base-url <url>    base URL for \`list\` paths (env IDCLI_API_BASE_URL, default base-url)
  --verbose               trace requests on stderr, secrets redacted
  --quiet                 only errors and warnings on stderr`;

const SUMMARIES: Record<string, string> = {
  login: 'sign in through the browser',
  token: 'print a valid access token',
  list: 'stream a paginated collection as NDJSON',
  status: 'show who is signed in and where credentials are kept',
  logout: 'remove the stored credentials',
  config: 'read and write settings of a profile',
  doctor: 'check configuration, network, port and keychain',
  completion: 'print a shell completion script',
};

function globalOptions(hidden: boolean): Option[] {
  const opts = [
    new Option('--profile <name>', 'profile to use (env IDCLI_PROFILE)'),
    new Option('--base-url <url>', 'identity service base URL (env IDCLI_BASE_URL)'),
    new Option('--client-id <uuid>', 'registered application id (env IDCLI_CLIENT_ID)'),
    new Option('--client-name <name>', 'registered client name (env IDCLI_CLIENT_NAME)'),
    new Option('--redirect-uri <url>', 'registered loopback callback (env IDCLI_REDIRECT_URI)'),
    new Option('--api-base-url <url>', 'base URL for list paths (env IDCLI_API_BASE_URL)'),
    new Option('--verbose', 'trace requests on stderr, secrets redacted'),
    new Option('--quiet', 'only errors and warnings on stderr'),
  ];
  if (hidden) for (const o of opts) o.hideHelp();
  return opts;
}

export function parseInteger(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw.trim())) throw new InvalidArgumentError(`${name} must be a whole number`);
    const n = Number(raw);
    if (n < min || n > max) throw new InvalidArgumentError(`${name} must be between ${min} and ${max}`);
    return n;
  };
}

type Runner = (command: Command, ctx: () => Promise<CommandContext>, deps: Deps) => Promise<void>;

/** The program itself; `run` receives each command's parsed options and a context builder. */
export function buildProgram(proc: Process, run: (r: Runner, command: Command) => Promise<void>): Command {
  const program = new Command('idcli');
  program
    .description('Sign in to the identity service and pull data out of its APIs.')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => proc.stdout.write(s),
      writeErr: (s) => proc.stderr.write(s),
    })
    .addHelpText(
      'after',
      `
Examples:
  $ idcli login                              # sign in through the browser
  $ idcli token                              # print an access token for scripts
  $ curl -H "Authorization: Bearer $(idcli token)" https://api.example.com/v1/me
  $ idcli list users > users.ndjson          # stream a collection as NDJSON

Exit codes: 0 ok, 1 internal error, 2 usage or configuration, 3 sign-in needed,
4 server or network failure, 5 server broke the contract, 130 interrupted.`,
    );
  for (const o of globalOptions(false)) program.addOption(o);

  const command = (name: string, description: string, examples: string) => {
    const c = program.command(name).summary(SUMMARIES[name] ?? description).description(description).helpOption('-h, --help', 'show help');
    for (const o of globalOptions(true)) c.addOption(o);
    c.addHelpText('after', `${GLOBAL_HELP}\n\nExamples:\n${examples}`);
    c.exitOverride();
    return c;
  };

  const lazy =
    (load: Runner) =>
    async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command;
      await run(load, cmd);
    };

  command(
    'login',
    'Sign in through the browser (OAuth 2.0 authorization code with PKCE) and store the credentials.',
    `  $ idcli login
  $ idcli login --no-browser            # print the URL to open on any browser of this machine
  $ idcli login --prompt login --login-hint alice@example.com
  $ idcli --profile staging login --timeout 120`,
  )
    .addOption(new Option('--prompt <mode>', 'sign-in UI behaviour').choices(['none', 'login', 'create']))
    .option('--login-hint <email>', 'pre-fill the email on the sign-in page')
    .option('--ui-locales <tags>', 'sign-in page language, e.g. "fr en" (env IDCLI_UI_LOCALES, default: your locale)')
    .option('--scope <scopes>', 'extra scopes after "openid <client-name>" (env IDCLI_SCOPE)')
    .option('--no-browser', 'do not open a browser; only print the sign-in URL')
    .option('--timeout <seconds>', 'how long to wait for the sign-in', parseInteger('--timeout', 1, 86400), 300)
    .action(
      lazy(async (cmd, ctx) => {
        const { runLogin } = await import('./commands/login.js');
        const o = cmd.opts();
        await runLogin(
          { prompt: o.prompt, loginHint: o.loginHint, browser: o.browser !== false, timeoutSec: o.timeout },
          await ctx(),
        );
      }),
    );

  command(
    'token',
    'Print a valid access token, refreshing it (Serial PKCE) when it is about to expire.',
    `  $ idcli token
  $ idcli token --refresh               # force a refresh
  $ idcli token --json | jq .expires_at
  $ export TOKEN=$(idcli token --min-ttl 600)   # valid for at least 10 more minutes`,
  )
    .option('--refresh', 'refresh even if the cached token is still valid')
    .option('--json', 'print {access_token, token_type, expires_in, expires_at, scope, id_token}')
    .option('--min-ttl <seconds>', 'refresh when the cached token expires sooner than this', parseInteger('--min-ttl', 0), 60)
    .action(
      lazy(async (cmd, ctx) => {
        const { runToken } = await import('./commands/token.js');
        const o = cmd.opts();
        await runToken({ refresh: o.refresh === true, json: o.json === true, minTtlSec: o.minTtl }, await ctx());
      }),
    );

  command(
    'list',
    'Stream every item of a paginated collection to stdout as NDJSON, one JSON object per line.',
    `  $ idcli list users > users.ndjson
  $ idcli list '/v1/users?filter=active' --limit 10
  $ idcli list users --count                         # print totalItems only
  $ idcli list users --concurrency 4 | jq -r .email
  $ idcli list 'https://api.example.com/v1/events?cursor=abc'   # resume where a run stopped`,
  )
    .argument('<path-or-url>', 'collection path (resolved against api-base-url) or full URL')
    .option('--page-size <n>', 'items per page for the first request', parseInteger('--page-size', 0))
    .option('--page-index <n>', 'page to start at (offset-based collections)', parseInteger('--page-index', 0))
    .option('--limit <n>', 'stop after this many items', parseInteger('--limit', 0))
    .option('--concurrency <n>', 'fetch this many pages at once (offset-based, totalItems known)', parseInteger('--concurrency', 1, 64))
    .option('--count', 'print totalItems only')
    .option('--max-retries <n>', 'retries for 429, 502, 503, 504 and network errors', parseInteger('--max-retries', 0, 100), 5)
    .action(
      lazy(async (cmd, ctx) => {
        const { runList } = await import('./commands/list.js');
        const o = cmd.opts();
        await runList(
          {
            target: cmd.args[0]!,
            pageSize: o.pageSize,
            pageIndex: o.pageIndex,
            limit: o.limit,
            concurrency: o.concurrency,
            count: o.count === true,
            maxRetries: o.maxRetries,
          },
          await ctx(),
        );
      }),
    );

  command(
    'status',
    'Show who is signed in, with which settings, and where the credentials are stored.',
    `  $ idcli status
  $ idcli status --json | jq .expiresAt`,
  )
    .option('--json', 'print the status as JSON')
    .action(
      lazy(async (cmd, ctx) => {
        const { runStatus } = await import('./commands/status.js');
        await runStatus({ json: cmd.opts().json === true }, await ctx());
      }),
    );

  command('logout', 'Remove the stored credentials of this profile from every credential store.', `  $ idcli logout\n  $ idcli --profile staging logout`).action(
    lazy(async (_cmd, ctx) => {
      const { runLogout } = await import('./commands/logout.js');
      await runLogout(await ctx());
    }),
  );

  const config = command(
    'config',
    'Read and write settings of a profile in config.json.',
    `  $ idcli config set base-url https://id.example.com
  $ idcli config set client-id 4f9c0a1e-0000-4000-8000-000000000000
  $ idcli --profile staging config list
  $ idcli config get redirect-uri`,
  );
  const configSub = (name: string, description: string) => {
    const c = config.command(name).description(description).helpOption('-h, --help', 'show help');
    for (const o of globalOptions(true)) c.addOption(o);
    c.exitOverride();
    return c;
  };
  configSub('set', 'set a key of the profile')
    .argument('<key>')
    .argument('<value>')
    .action(
      lazy(async (cmd) => {
        const { configSet } = await import('./commands/config.js');
        await configSet(cmd.args[0]!, cmd.args[1]!, configTarget(cmd, proc));
      }),
    );
  configSub('get', 'print a key of the profile')
    .argument('<key>')
    .action(
      lazy(async (cmd) => {
        const { configGet } = await import('./commands/config.js');
        await configGet(cmd.args[0]!, configTarget(cmd, proc));
      }),
    );
  configSub('unset', 'remove a key from the profile')
    .argument('<key>')
    .action(
      lazy(async (cmd) => {
        const { configUnset } = await import('./commands/config.js');
        await configUnset(cmd.args[0]!, configTarget(cmd, proc));
      }),
    );
  configSub('list', 'print the keys of the profile as key=value')
    .action(
      lazy(async (cmd) => {
        const { configList } = await import('./commands/config.js');
        await configList(configTarget(cmd, proc));
      }),
    );

  command(
    'doctor',
    'Check the configuration, the network, the loopback port and the keychain, each with a fix.',
    `  $ idcli doctor
  $ idcli doctor --json`,
  )
    .option('--json', 'print the checks as JSON')
    .action(
      lazy(async (cmd, ctx, deps) => {
        const { runDoctor } = await import('./commands/doctor.js');
        // Doctor reports a broken configuration as a failed check, so it resolves the context itself.
        await runDoctor({ json: cmd.opts().json === true }, deps, ctx);
      }),
    );

  command(
    'completion',
    'Print a shell completion script.',
    `  $ idcli completion bash > ~/.local/share/bash-completion/completions/idcli
  $ idcli completion zsh > "\${fpath[1]}/_idcli"
  $ idcli completion fish > ~/.config/fish/completions/idcli.fish`,
  )
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .action(
      lazy(async (cmd) => {
        const { completionScript } = await import('./commands/completion.js');
        const { programSpec } = await import('./completion/spec.js');
        proc.stdout.write(completionScript(cmd.args[0] as 'bash' | 'zsh' | 'fish', programSpec(program, Object.keys(CONFIG_KEYS))));
      }),
    );

  // Used by the completion scripts to offer profile names; not part of the documented surface.
  program
    .command('__profiles', { hidden: true })
    .action(async () => {
      const file = await loadConfigFile(configDirFor(proc.env));
      for (const name of Object.keys(file.profiles)) proc.stdout.write(`${name}\n`);
    });

  return program;
}

function configTarget(cmd: Command, proc: Process) {
  const g = cmd.optsWithGlobals() as GlobalOpts;
  return { configDir: configDirFor(proc.env), flags: { profile: g.profile } as SettingFlags, env: proc.env, stdout: proc.stdout };
}

function settingFlags(g: GlobalOpts): SettingFlags {
  const flags: SettingFlags = {};
  if (g.profile !== undefined) flags.profile = g.profile;
  if (g.baseUrl !== undefined) flags.baseUrl = g.baseUrl;
  if (g.clientId !== undefined) flags.clientId = g.clientId;
  if (g.clientName !== undefined) flags.clientName = g.clientName;
  if (g.redirectUri !== undefined) flags.redirectUri = g.redirectUri;
  if (g.apiBaseUrl !== undefined) flags.apiBaseUrl = g.apiBaseUrl;
  if (g.scope !== undefined) flags.scope = g.scope;
  if (g.uiLocales !== undefined) flags.uiLocales = g.uiLocales;
  return flags;
}

/** Runs the CLI and returns the exit code; never throws. */
export async function main(proc: Process): Promise<number> {
  const style = stderrStyle(proc.stderr, proc.env);
  let deps: Deps | undefined;
  const run = async (runner: Runner, cmd: Command) => {
    const g = cmd.optsWithGlobals() as GlobalOpts;
    if (g.verbose && g.quiet) throw usageError('--verbose and --quiet cannot be used together');
    const log = createLogger(proc.stderr, { verbose: g.verbose === true, quiet: g.quiet === true, warnPrefix: style.warn('warning:') });
    const d: Deps = { env: proc.env, stdout: proc.stdout, stderr: proc.stderr, log, now: Date.now, signal: proc.signal };
    deps = d;
    const ctx = async (): Promise<CommandContext> => {
      const file = await loadConfigFile(configDirFor(proc.env));
      const settings = resolveSettings(settingFlags(g), proc.env, file);
      const base = { deps: d, settings };
      return { ...base, tokens: () => openTokenSource(base) };
    };
    await runner(cmd, ctx, d);
  };
  try {
    const program = buildProgram(proc, run);
    await program.parseAsync(proc.argv);
    return ExitCode.OK;
  } catch (err) {
    return report(err, proc, style, deps);
  }
}

function report(err: unknown, proc: Process, style: ReturnType<typeof stderrStyle>, deps: Deps | undefined): number {
  if (err instanceof CommanderError) {
    // Help and version exit through here with code 0; commander has already printed its own usage message.
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) return ExitCode.OK;
    if (err.code === 'commander.help') return ExitCode.OK;
    return ExitCode.USAGE;
  }
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

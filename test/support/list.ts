/**
 * Shared set-up for the `idcli list` integration tests: the contract emulator on loopback, and `idcli list` run in
 * this process through main() (test/support/run-command.ts), or as the BUILT CLI in a child process where a process
 * is the point (signals, a closed pipe, another user's files, runs side by side) and for the single executable.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { type Emulator, type EmulatorOptions, startEmulator } from '../emulator/index.js';
import { baseEnv, type CliResult, runCli, tempDir } from './cli.js';
import type { CommandOptions } from './run-command.js';
import { type Scheme, type SchemeSetup, schemeSetup } from './scheme.js';

export interface ListRun extends CliResult {
  /** Requests the emulator saw for collection paths during this run. */
  requests: string[];
}

export interface ListEnv {
  emu: Emulator;
  configDir: string;
  /** An access token for IDCLI_ACCESS_TOKEN, or undefined to use the stored sign-in. */
  token: string | undefined;
  /** What the CLI needs to trust the emulator (NODE_EXTRA_CA_CERTS over HTTPS; see test/support/scheme.ts). */
  trust?: Record<string, string>;
}

export async function listEnv(
  emu: Emulator,
  token: string | undefined,
): Promise<ListEnv & { cleanup: () => Promise<void> }> {
  const dir = await tempDir('idcli-list-');
  return { emu, configDir: dir.path, token, cleanup: dir.cleanup };
}

/** The emulator and list environment of the running test, as eachEmulator() and eachTest() register them. */
export interface ListContext {
  readonly emu: Emulator;
  readonly env: ListEnv & { cleanup: () => Promise<void> };
}

/**
 * Registers `start` before every test of the calling suite and the closing of what it started after it. The returned
 * context reads the running test's values, and says so plainly when read outside a test (at collection time, in a
 * hook that runs before the emulator starts, or after it is closed).
 */
function eachContext(start: () => Promise<ListContext>): ListContext {
  let current: ListContext | undefined;
  beforeEach(async () => {
    current = await start();
  });
  afterEach(async () => {
    const ending = current;
    current = undefined;
    await ending?.emu.close();
    await ending?.env.cleanup();
  });
  const now = (what: string): ListContext => {
    if (current === undefined) throw new Error(`the ${what} of a list test exists only while the test runs`);
    return current;
  };
  return {
    get emu() {
      return now('emulator').emu;
    },
    get env() {
      return now('environment').env;
    },
  };
}

/**
 * Registers, for every test of the calling suite, a fresh emulator started with `options` and a list environment
 * with a minted access token, read through the returned context; both are closed after the test.
 */
export function eachEmulator(options: EmulatorOptions = {}): ListContext {
  return eachContext(async () => {
    const emu = await startEmulator(options);
    return { emu, env: await listEnv(emu, emu.mintTokens().access_token) };
  });
}

/**
 * Registers, for every test of the calling suite, a fresh emulator serving `items` at /v1/items and a list
 * environment (with a minted access token, or `stored` for the sign-in in its config directory), read through the
 * returned context; both are closed after the test. Over `https` the suite's emulators share one CA made for it.
 */
export function eachTest(
  items: readonly string[],
  token: 'minted' | 'stored' = 'minted',
  scheme: Scheme = 'http',
): ListContext {
  let pki: { path: string; cleanup: () => Promise<void> } | undefined;
  let setup: SchemeSetup = { env: {} };
  beforeAll(async () => {
    if (scheme === 'http') return;
    pki = await tempDir('idcli-list-ca-');
    setup = schemeSetup(scheme, pki.path);
  });
  afterAll(async () => {
    await pki?.cleanup();
  });
  return eachContext(async () => {
    const emu = await startEmulator(setup.tls ? { tls: setup.tls } : {});
    const env = await listEnv(emu, token === 'minted' ? emu.mintTokens().access_token : undefined);
    env.trust = setup.env;
    emu.setCollection('/v1/items', { type: 'offset', items: [...items] });
    return { emu, env };
  });
}

/** A list context for the `-o FILE` tests, with the test's FILE. */
export interface DumpContext extends ListContext {
  /** items.ndjson in the running test's config directory. */
  readonly out: string;
}

/** eachTest() over `items`, for the tests of `idcli list -o FILE`: each test has a FILE of its own. */
export function eachDump(items: readonly string[]): DumpContext {
  const ctx = eachTest(items);
  return {
    get emu() {
      return ctx.emu;
    },
    get env() {
      return ctx.env;
    },
    get out() {
      return join(ctx.env.configDir, 'items.ndjson');
    },
  };
}

/** `list` arguments for a walk one page at a time, where the count of requests tells how far FILE is. */
export const seq: readonly string[] = ['--concurrency', '1'];

/**
 * The environment of a CLI run against the emulator. IDCLI_PAGE_SIZE=service sends no pageSize, so a test that does
 * not ask otherwise walks the service's default pages (100 items); the tests of idcli's own page sizes unset it.
 */
export function cliEnv(
  env: ListEnv,
  extra: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  return baseEnv({
    IDCLI_PAGE_SIZE: 'service',
    IDCLI_BASE_URL: env.emu.baseUrl,
    IDCLI_CLIENT_ID: env.emu.client.id,
    IDCLI_CLIENT_NAME: env.emu.client.name,
    IDCLI_REDIRECT_URI: env.emu.client.callbackUrl,
    IDCLI_CONFIG_DIR: env.configDir,
    IDCLI_CREDENTIAL_STORE: 'file',
    IDCLI_ACCESS_TOKEN: env.token,
    ...env.trust,
    ...extra,
  });
}

/** With IDCLI_TEST_EXE the single executable is what is tested: every run starts it. */
const EXE = process.env.IDCLI_TEST_EXE !== undefined && process.env.IDCLI_TEST_EXE !== '';

/** `idcli list` in this process (runCommand): its output, exit code and the requests it made. */
export async function listCommand(
  env: ListEnv,
  args: string[],
  opts: { extraEnv?: Record<string, string | undefined> } & Omit<CommandOptions, 'env' | 'configDir'> = {},
): Promise<ListRun> {
  if (EXE) return list(env, args, { extraEnv: opts.extraEnv });
  const { extraEnv, ...commandOpts } = opts;
  // Loaded here, not at the top: a file whose runs are all processes does not pay for loading the CLI's modules.
  const { runCommand } = await import('./run-command.js');
  return withRequests(env, () => runCommand(['list', ...args], { ...commandOpts, env: cliEnv(env, extraEnv) }));
}

/** `idcli list` as the BUILT CLI in a child process: for what only a process shows. */
export async function list(
  env: ListEnv,
  args: string[],
  opts: {
    extraEnv?: Record<string, string | undefined>;
    onSpawn?: (c: ChildProcess) => void;
    timeoutMs?: number;
    stdout?: number;
  } = {},
): Promise<ListRun> {
  return withRequests(env, () =>
    runCli(['list', ...args], {
      env: cliEnv(env, opts.extraEnv),
      timeoutMs: opts.timeoutMs ?? 60_000,
      onSpawn: opts.onSpawn,
      stdout: opts.stdout,
    }),
  );
}

async function withRequests(env: ListEnv, run: () => Promise<CliResult>): Promise<ListRun> {
  const before = env.emu.requests.length;
  const result = await run();
  const requests = env.emu.requests
    .slice(before)
    .filter((r) => !r.path.startsWith('/oauth/'))
    .map((r) => r.url);
  return { ...result, requests };
}

/**
 * Sends `signal` (`times` over) as the walk's third request for /v1/items arrives, and holds that page: two pages
 * are written. For walks one page at a time (--concurrency 1), where the count of requests tells how far the output
 * is. The signal goes from the emulator's arrival hook, so it lands at that exact point whatever the machine's load.
 */
export function signalAtThirdPage(
  emu: Emulator,
  signal: NodeJS.Signals,
  times = 1,
): { onSpawn: (c: ChildProcess) => void } {
  emu.inject({ path: '/v1/items', nth: 3, fault: { kind: 'latency', ms: 20_000 } });
  let child: ChildProcess | undefined;
  let seen = 0;
  emu.onRequest((q) => {
    if (q.path !== '/v1/items' || ++seen !== 3) return;
    emu.onRequest(undefined);
    for (let i = 0; i < times; i++) child?.kill(signal);
  });
  return {
    onSpawn: (c) => {
      child = c;
    },
  };
}

/** Every request for `path` from the `nth` on is answered `status`: the walk fails there for good (at once for 500). */
export function failFrom(emu: Emulator, nth: number, path = '/v1/items', status = 500): void {
  emu.inject({ path, nth, times: Number.POSITIVE_INFINITY, fault: { kind: 'status', status } });
}

/** The command the CLI printed for resuming, as its URL argument. */
export function resumeUrl(stderr: string): string | undefined {
  return /resume with: idcli list '([^']+)'/.exec(stderr)?.[1];
}

/** Items as NDJSON text, as idcli must print them. */
export function ndjson(items: readonly string[]): string {
  return items.map((i) => `${i}\n`).join('');
}

/** `count` compact user-like items with an index, for tests that only need distinct lines. */
export function plainItems(count: number, prefix = 'i'): string[] {
  return Array.from({ length: count }, (_, i) => `{"id":"${prefix}${i}","n":${i}}`);
}

/** Runs a bash script (e.g. a pipeline into `head`) and collects its output. */
export function shell(
  script: string,
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const cleanEnv = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv;
    const child = spawn('bash', ['-c', script], { env: cleanEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString();
    });
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Items whose text JSON.parse + JSON.stringify would change: big integers, number spellings, escapes,
 * non-ASCII, key order, and insignificant whitespace inside an item (which idcli must remove, and only that).
 */
const AWKWARD: Array<[raw: string, expected: string]> = [
  [
    '{"id":12345678901234567890123456789,"neg":-9007199254740993}',
    '{"id":12345678901234567890123456789,"neg":-9007199254740993}',
  ],
  ['{"z":"last","a":"first","m":{"y":1,"x":2}}', '{"z":"last","a":"first","m":{"y":1,"x":2}}'],
  [
    '{"s":"quote \\" backslash \\\\ slash \\/ tab \\t nl \\n e \\u00e9 smile \\uD83D\\uDE00 lone \\udc00"}',
    '{"s":"quote \\" backslash \\\\ slash \\/ tab \\t nl \\n e \\u00e9 smile \\uD83D\\uDE00 lone \\udc00"}',
  ],
  ['{"uni":"é日本😀","rtl":"שלום","zw":"a\u200bb"}', '{"uni":"é日本😀","rtl":"שלום","zw":"a\u200bb"}'],
  ['{"num":[1.0,1e5,1E-5,-0,0.10,2.50e+10,1E400]}', '{"num":[1.0,1e5,1E-5,-0,0.10,2.50e+10,1E400]}'],
  ['{"empty":{},"arr":[],"nul":null,"t":true,"f":false}', '{"empty":{},"arr":[],"nul":null,"t":true,"f":false}'],
  ['{ "spaced" : [ 1 ,\n 2 ] ,\t"in string" : "a  b\\n" }', '{"spaced":[1,2],"in string":"a  b\\n"}'],
  ['{"dup":1,"dup":2}', '{"dup":1,"dup":2}'],
];

/** n awkward items, each made unique by a leading index member. */
export function awkward(n: number): { raw: string[]; expected: string[] } {
  const raw: string[] = [];
  const expected: string[] = [];
  for (let i = 0; i < n; i++) {
    const [r, e] = AWKWARD[i % AWKWARD.length]!;
    raw.push(r.replace('{', `{"n":${i},`));
    expected.push(e.replace('{', `{"n":${i},`));
  }
  return { raw, expected };
}

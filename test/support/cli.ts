/**
 * Runs the BUILT CLI (bin/idcli.cjs → dist/) as a child process, the way users and scripts run it.
 * Tests pass the whole environment explicitly so nothing leaks in from the developer's shell.
 *
 * IDCLI_TEST_EXE=<path> puts the single executable (npm run build:exe) in the place of bin/idcli.cjs, for every
 * test that starts the CLI through this module. It then runs with no Node to find: its PATH loses every directory
 * holding a `node`, and a `node` that would stay (the machine's own, in /usr/bin) must be masked first
 * (scripts/without-node.sh), or the run fails rather than test less than it claims.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, inject } from 'vitest';
import { shellQuote } from '../../src/shell-quote.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'idcli.cjs');
/** The single executable under test, or undefined for the npm package. */
export const EXE = process.env.IDCLI_TEST_EXE || undefined;
/** The CLI under test as the start of a shell command line. */
export const IDCLI = EXE ? shellQuote(EXE) : `${shellQuote(process.execPath)} ${shellQuote(BIN)}`;

/**
 * A Node script the CLI is to run as a command (an HTTP "browser" for $BROWSER): by its path, whose `#!` finds
 * node on PATH, or, for the executable, which has no node on its PATH, through this test's Node by its full path.
 */
export function nodeScript(path: string): string {
  return EXE ? `${process.execPath} ${path}` : path;
}

function isNode(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** PATH without the directories that hold a node; throws when a node remains that only a mask can hide. */
function withoutNode(path: string | undefined): string {
  const dirs = (path ?? '').split(delimiter).filter((d) => d !== '');
  const kept = dirs.filter((d) => !isNode(join(d, 'node')) || ['/usr/bin', '/bin'].includes(d));
  const left = kept.find((d) => isNode(join(d, 'node')));
  if (left !== undefined)
    throw new Error(`${left}/node would be found by the executable: run the tests under scripts/without-node.sh`);
  return kept.join(delimiter);
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  stdoutBytes: Buffer;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  input?: string;
  timeoutMs?: number;
  cwd?: string;
  /** The bin script to run; the worktree's own unless given. */
  bin?: string;
  /** Called once the child exists, e.g. to send it signals. */
  onSpawn?: (child: ChildProcess) => void;
  /** A file descriptor the CLI gets as its stdout (a FIFO nobody reads, say); the result's stdout is then empty. */
  stdout?: number;
  /** A command the CLI is run under, its own arguments first (e.g. `unshare -m …` for a private mount namespace). */
  prefix?: string[];
  /** Run as this user and group (needs root), e.g. to meet a permission that root would pass. */
  uid?: number;
  gid?: number;
}

/** A minimal, predictable environment: PATH and HOME only, plus what the test adds. */
export function baseEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {
    PATH: EXE ? withoutNode(process.env.PATH) : process.env.PATH,
    HOME: process.env.HOME,
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    // The keyring test harness exports these; children must reach the same private Secret Service.
    DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS,
    XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR,
    XDG_DATA_HOME: process.env.XDG_DATA_HOME,
  };
  return { ...env, ...extra };
}

/** The program and its first arguments that start the CLI for these options. */
async function command(opts: CliOptions): Promise<string[]> {
  const asOther = opts.uid !== undefined && opts.bin === undefined;
  // A run as another user cannot be expected to reach the work tree or the runtime, which may sit in directories only
  // their owner can enter (a fresh clone, or a Node unpacked under a 0700 temp dir): it runs the run's copies of them
  // (test/support/global-setup.ts).
  const copies = inject('forOtherUsers');
  if (EXE !== undefined && opts.bin === undefined) return [asOther ? copies.exe! : EXE];
  const { node, bin } = asOther ? copies : { node: process.execPath, bin: opts.bin ?? BIN };
  return [node, bin];
}

export async function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const asOther = opts.uid !== undefined && opts.bin === undefined;
  const [program, ...first] = [...(opts.prefix ?? []), ...(await command(opts))];
  const cwd = opts.cwd ?? (asOther ? tmpdir() : ROOT);
  return new Promise((resolve, reject) => {
    const env = Object.fromEntries(
      Object.entries(opts.env ?? baseEnv()).filter(([, v]) => v !== undefined),
    ) as NodeJS.ProcessEnv;
    if (EXE !== undefined && opts.bin === undefined) env.PATH = withoutNode(env.PATH);
    const child = spawn(program!, [...first, ...args], {
      env,
      cwd,
      stdio: ['pipe', opts.stdout ?? 'pipe', 'pipe'],
      ...(opts.uid === undefined ? {} : { uid: opts.uid }),
      ...(opts.gid === undefined ? {} : { gid: opts.gid }),
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr!.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdoutBytes = Buffer.concat(out);
      resolve({
        code,
        signal,
        stdout: stdoutBytes.toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        stdoutBytes,
      });
    });
    opts.onSpawn?.(child);
    // A child that exits before it reads its stdin (an error found in the arguments) closes the pipe: EPIPE here
    // is the child's business, which the test judges by its exit code.
    child.stdin!.on('error', () => {});
    child.stdin!.end(opts.input ?? '');
  });
}

/** A run of idcli whose stderr is followed as it arrives. */
export interface FollowedRun {
  done: Promise<CliResult>;
  /** stderr so far, as it arrives. */
  said: () => string;
  exited: () => boolean;
}

/**
 * Starts a process through `run` (runCli, or a harness's run, handed the `onSpawn` to pass on) and follows its stderr
 * once it is spawned.
 */
export async function followProcess(
  run: (onSpawn: (child: ChildProcess) => void) => Promise<CliResult>,
): Promise<FollowedRun & { child: ChildProcess }> {
  let resolveChild!: (c: ChildProcess) => void;
  const spawned = new Promise<ChildProcess>((r) => {
    resolveChild = r;
  });
  let over = false;
  const done = run(resolveChild).finally(() => {
    over = true;
  });
  const child = await spawned;
  let said = '';
  child.stderr!.on('data', (b: Buffer) => {
    said += b.toString();
  });
  return { child, done, said: () => said, exited: () => over };
}

/** Starts a run in this process through `run` (handed the `onStderr` to pass on) and follows its stderr. */
export function followInProcess(run: (onStderr: (text: string) => void) => Promise<CliResult>): FollowedRun {
  let said = '';
  let over = false;
  const done = run((text) => void (said += text)).finally(() => {
    over = true;
  });
  return { done, said: () => said, exited: () => over };
}

/** A fresh config directory per test, removed afterwards. */
export async function tempDir(prefix = 'idcli-test-'): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  // Retried: a process the test started (the HTTP browser of a sign-in that timed out) may still be writing its log
  // there, and one file written between the listing and the rmdir fails the removal with ENOTEMPTY.
  return { path, cleanup: () => rm(path, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }) };
}

/**
 * Runs the CLI with baseEnv() and `extra`, in a config directory of its own (IDCLI_CONFIG_DIR) made for this run and
 * removed after it; `elapsedMs` is how long the CLI ran.
 */
export async function runInTempConfig(
  args: string[],
  extra: Record<string, string | undefined> = {},
  opts: Omit<CliOptions, 'env'> = {},
): Promise<CliResult & { elapsedMs: number }> {
  const dir = await tempDir();
  try {
    const started = Date.now();
    const r = await runCli(args, { ...opts, env: baseEnv({ IDCLI_CONFIG_DIR: dir.path, ...extra }) });
    return { ...r, elapsedMs: Date.now() - started };
  } finally {
    await dir.cleanup();
  }
}

/** A stack frame or Node's internals: never on stderr, whatever failed. */
export const NO_STACK = /^\s+at |node:internal|\.cjs:\d+/m;

/**
 * Exactly one `error:` line on stderr, matching `pattern`, and no stack trace; unless `alone` is false, nothing else
 * on stderr either (a run may add a line that says how far it got).
 */
export function expectOneErrorLine(r: Pick<CliResult, 'stderr'>, pattern: RegExp, { alone = true } = {}): void {
  const lines = r.stderr.trimEnd().split('\n');
  const errors = lines.filter((l) => l.startsWith('error: '));
  expect(errors, r.stderr).toHaveLength(1);
  expect(errors[0]).toMatch(pattern);
  if (alone) expect(lines, r.stderr).toHaveLength(1);
  expect(r.stderr).not.toMatch(NO_STACK);
}

/**
 * Needs a process: these send signals to a running `idcli api`, read its peak memory and see how it ends (by itself
 * or through process.exit()), which only a real process has. Uploads of --input that never end by themselves (/dev/zero, a FIFO nobody writes to) are ended by SIGINT or
 * SIGTERM with the contract's exit codes, large bodies go out in bounded memory, and a finished run is not cut short
 * by process.exit(). The rest of `idcli api` is
 * tested in process in test/commands/api/command.test.ts.
 */
import type { ChildProcess } from 'node:child_process';
import { readdir, readFile, readlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectNoSecrets, type Harness, harness } from '../support/harness.js';
import { until } from '../support/until.js';
import { shell } from '../support/list.js';
import { baseEnv, type CliOptions, type CliResult } from '../support/cli.js';
import { storeSignIn } from '../support/sign-in.js';

let h: Harness;

beforeEach(async () => {
  h = await harness({ scheme: 'http' });
  await storeSignIn({ emu: h.emu, configDir: join(h.dir, 'config'), ttlSec: 3600 });
});

afterEach(async () => {
  // No token, code or verifier in any output of the test.
  expectNoSecrets(h, []);
  expect(h.emu.errors).toEqual([]);
  await h.close();
});

/** `idcli api args` in a process of its own, on the built CLI. */
function api(
  args: string[],
  opts: Omit<CliOptions, 'env'> = {},
  extra: Record<string, string | undefined> = {},
): Promise<CliResult> {
  return h.run(['api', ...args], { IDCLI_API_BASE_URL: `${h.emu.baseUrl}/v1`, ...extra }, opts);
}

/** Requests the emulator saw outside /oauth/. */
function calls(path?: string) {
  return h.emu.requests.filter((r) => !r.path.startsWith('/oauth/') && (path === undefined || r.path === path));
}

describe.runIf(process.platform === 'linux')('idcli api --input: signals and memory of a real process', () => {
  const MiB = 1024 * 1024;
  /**
   * The most resident memory a run may reach: the runtime's own, plus up to 64 MiB kept of a body that can be read
   * only once. A body read whole would pass it within the first few hundred megabytes.
   */
  const MAX_PEAK_MIB = 224;
  /**
   * How long a signalled run may take to end. Generous on purpose: what these tests catch is a run that never ends
   * (an endless body, a FIFO nobody writes to), not a slow one on a busy machine.
   */
  const SIGNAL_EXIT_MS = 20_000;

  /** The child's peak resident memory so far (VmHWM) in MiB, or undefined once it has gone. */
  async function peakMiB(pid: number | undefined): Promise<number | undefined> {
    const status = pid === undefined ? undefined : await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
    const kb = status === undefined ? undefined : /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  }

  /** Whether the process has `path` open. */
  async function holds(pid: number | undefined, path: string): Promise<boolean> {
    if (pid === undefined) return false;
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    const targets = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
    return targets.includes(path);
  }

  function received(): number {
    return calls('/v1/upload')[0]?.received ?? 0;
  }

  /** Starts `idcli api args`; once the upload endpoint has `bytes` of the body, the child's peak memory then. */
  async function uploading(args: string[], bytes: number) {
    let child: ChildProcess | undefined;
    const running = api(args, { onSpawn: (c) => (child = c), timeoutMs: 120_000 });
    const peak = await until(
      async () => (received() >= bytes ? ((await peakMiB(child?.pid)) ?? -1) : undefined),
      90_000,
      `${bytes} bytes at the server`,
    ).catch(stopped(() => child));
    return { child: child!, running, peak };
  }

  /** Rethrows a failed wait once the child is killed, so no process is left behind blocked on its input. */
  function stopped(child: () => ChildProcess | undefined): (err: unknown) => never {
    return (err) => {
      child()?.kill('SIGKILL');
      throw err;
    };
  }

  async function fifo(): Promise<string> {
    const path = join(h.dir, 'body.fifo');
    expect((await shell(`mkfifo "${path}"`, baseEnv())).code).toBe(0);
    return path;
  }

  /** Starts `idcli api args` and waits until it has the FIFO open, reading from it. */
  async function readingFifo(path: string, args: string[]) {
    let child: ChildProcess | undefined;
    const running = api(args, { onSpawn: (c) => (child = c) });
    await until(async () => ((await holds(child?.pid, path)) ? true : undefined), 20_000, 'the FIFO opened').catch(
      stopped(() => child),
    );
    return { child: child!, running };
  }

  it('a large file goes out with its Content-Length as it is read, in bounded memory', async () => {
    const file = join(h.dir, 'big.bin');
    await writeFile(file, '');
    await truncate(file, 512 * MiB);
    const { running, peak } = await uploading(['-X', 'PUT', 'upload', '--input', file], 256 * MiB);
    const r = await running;
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ received: 512 * MiB });
    expect(r.stderr).toBe('');
    expect(calls('/v1/upload')[0]!.headers['content-length']).toBe(String(512 * MiB));
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(MAX_PEAK_MIB);
  }, 120_000);

  it('/dev/zero: past the cap it is sent chunked once, in bounded memory; the first SIGTERM ends it (143)', async () => {
    const { child, running, peak } = await uploading(['-X', 'POST', 'upload', '--input', '/dev/zero'], 384 * MiB);
    const stoppedAt = Date.now();
    child.kill('SIGTERM');
    const r = await running;
    expect(Date.now() - stoppedAt).toBeLessThan(SIGNAL_EXIT_MS);
    expect(r.code).toBe(143);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(MAX_PEAK_MIB);
    expect(r.stderr).toBe(
      '--input /dev/zero is over 64 MB: it is sent as it is read, and the request is not repeated (no retry, no second try after a 401)\n',
    );
    expect(calls('/v1/upload')).toHaveLength(1);
    expect(calls('/v1/upload')[0]!.headers['transfer-encoding']).toBe('chunked');
  }, 120_000);

  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`a FIFO nobody writes to: ${signal} ends the wait (${code}), nothing sent`, async () => {
      const path = await fifo();
      const { child, running } = await readingFifo(path, ['-X', 'POST', 'upload', '--input', path]);
      const stoppedAt = Date.now();
      child.kill(signal);
      const r = await running;
      expect(Date.now() - stoppedAt).toBeLessThan(SIGNAL_EXIT_MS);
      expect(r.code).toBe(code);
      expect(r.stdout).toBe('');
      expect(calls()).toHaveLength(0);
    });
  }
});

describe('idcli api: how a finished run ends', () => {
  const MiB = 1024 * 1024;

  // process.exit() can hang for good on Node 24 when V8 still compiles in the background, which a long upload makes
  // likely; --trace-exit makes Node report every process.exit() on stderr.
  it('a finished run ends by itself, not through process.exit(), and keeps its exit code', async () => {
    const file = join(h.dir, 'body.bin');
    await writeFile(file, '');
    await truncate(file, 8 * MiB);
    const traced = { NODE_OPTIONS: '--trace-exit' };
    const sent = await api(['-X', 'PUT', 'upload', '--input', file], {}, traced);
    expect(sent.code).toBe(0);
    expect(JSON.parse(sent.stdout)).toEqual({ received: 8 * MiB });
    expect(sent.stderr).toBe('');
    const failed = await api(['users/nobody'], {}, traced);
    expect(failed.code).toBe(4);
    expect(failed.stderr).not.toContain('Exited the environment');
    expect(failed.stderr.trim().split('\n')).toHaveLength(1);
  });
});

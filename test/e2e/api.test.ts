/**
 * Needs a process: these send signals to a running `idcli api`, read its peak memory, see how it ends (by itself or
 * through process.exit()), and give it a terminal, a file as fd 1, a pipe its reader closes, and a real shell, which
 * only a real process has. Uploads of --input that never end by themselves (/dev/zero, a FIFO nobody writes to) are
 * ended by SIGINT or SIGTERM with the contract's exit codes, large bodies go out in bounded memory, a finished run
 * is not cut short by process.exit(), output reaches a terminal escaped and a file or a pipe byte for byte, a reader
 * that leaves early is no failure, and `idcli token --header` feeds curl in a traced shell without showing the
 * token. The rest of `idcli api` is tested in process in test/commands/api/command.test.ts.
 */
import type { ChildProcess } from 'node:child_process';
import { readdir, readFile, readlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Harness } from '../support/harness.js';
import { until } from '../support/until.js';
import { shell } from '../support/list.js';
import { type CliOptions, type CliResult, IDCLI } from '../support/cli.js';
import { onTerminal } from '../support/pty.js';
import { SCHEMES, type Scheme } from '../support/scheme.js';
import { apiCalls, apiEnv, eachSignedInTest, fifo, ITEM } from '../support/api.js';

const CURL = await hasCurl();

let h: Harness;

/** Registers, for every test of the calling suite, a signed-in harness over `scheme` with the item stored. */
function eachTest(scheme: Scheme = 'http'): void {
  eachSignedInTest(scheme, (harness) => {
    h = harness;
  });
}

/** `idcli api args` in a process of its own, on the built CLI. */
function api(
  args: string[],
  opts: Omit<CliOptions, 'env'> = {},
  extra: Record<string, string | undefined> = {},
): Promise<CliResult> {
  return h.run(['api', ...args], { ...apiEnv(h.emu), ...extra }, opts);
}

/** Requests the emulator saw outside /oauth/. */
function calls(path?: string) {
  return apiCalls(h.emu, path);
}

describe.runIf(process.platform === 'linux')('idcli api --input: signals and memory of a real process', () => {
  eachTest();

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
      const path = await fifo(h.dir);
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
  eachTest();

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

describe.each(SCHEMES)('idcli api: a terminal, a file and a pipe as its output, over %s', (scheme) => {
  eachTest(scheme);

  it('on a terminal, control characters but newline and tab are shown escaped; into a pipe or a file, byte for byte', async () => {
    // Clear the screen, retitle the window, overwrite a line, delete, C1 CSI (as UTF-8), NUL; then plain text.
    const body = Buffer.from(
      'a\x1b[2Jb \x1b]0;pwned\x07 ok\rFAKE \x7f\u009b31m\x00\x08\x0c end\tcafé ✓\nline 2\n',
      'utf8',
    );
    h.emu.setResource('/v1/odd', body);
    const env = h.env(apiEnv(h.emu));
    const tty = await onTerminal(`${IDCLI} api odd`, { env });
    h.outputs.push(tty.raw);
    expect(tty.code).toBe(0);
    // The terminal's line discipline turns each \n into \r\n; nothing else reaches it but the escaped text.
    expect(tty.raw).toBe(
      'a\\u001b[2Jb \\u001b]0;pwned\\u0007 ok\\rFAKE \\u007f\\u009b31m\\u0000\\b\\f end\tcafé ✓\r\nline 2\r\n',
    );
    const piped = await api(['odd']);
    expect(piped.code).toBe(0);
    expect(piped.stdoutBytes.equals(body)).toBe(true);
    const file = join(h.dir, 'odd.out');
    const toFile = await shell(`${IDCLI} api odd > "${file}"`, env);
    expect(toFile.code).toBe(0);
    expect((await readFile(file)).equals(body)).toBe(true);
  });

  it('a reader that leaves early (| head) is exit 0', async () => {
    h.emu.setResource('/v1/big', JSON.stringify({ data: 'x'.repeat(4 * 1024 * 1024) }));
    const r = await shell(`${IDCLI} api big | head -c 10; echo " exit=\${PIPESTATUS[0]}"`, h.env(apiEnv(h.emu)));
    expect(r.stdout).toBe('{"data":"x exit=0\n');
    expect(r.stderr).toBe('');
  });
});

describe('idcli token --header in a real shell', () => {
  eachTest();

  it.runIf(CURL)('piped into curl -H @-: the call works and a set -x trace shows no token', async () => {
    const token = (await h.record())!.accessToken!;
    const r = await shell(`set -x; ${IDCLI} token --header | curl -sS -H @- "${h.emu.baseUrl}/v1/users/42"`, h.env());
    h.outputs.push(r.stdout, r.stderr);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ITEM);
    expect(r.stderr).toContain('+ curl -sS -H @-');
    expect(r.stderr).not.toContain(token);
    expect(calls()[0]!.bearer).toBe(token);
  });
});

async function hasCurl(): Promise<boolean> {
  const r = await shell('command -v curl', { PATH: process.env.PATH });
  return r.code === 0;
}

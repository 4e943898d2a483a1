// A process is the point: idcli's own command line, stdio handed on, stop signals and exit statuses of processes.
/**
 * `idcli exec`: the command runs without a shell, the token in its environment and in no command line, its stdio
 * its own, stop signals passed on, its exit status idcli's.
 */
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeEachStore, harness, type Harness } from '../../support/harness.js';
import { expectOneErrorLine, IDCLI } from '../../support/cli.js';
import { onTerminal } from '../../support/pty.js';
import { until } from '../../support/until.js';
import { refreshes, seedSignIn } from '../../support/credential.js';

const CHILD = join(import.meta.dirname, '..', '..', 'support', 'fixtures', 'exec-child.mjs');
type Report = { token?: string; self: string; parent: string };
const reportIn = (stdout: string): Report => JSON.parse(stdout.split('\n')[0]!) as Report;

describeEachStore('exec', (store) => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness({ store });
  });
  afterEach(async () => {
    await h?.close();
  });

  it('gives the command the access token in its environment, in no command line', async () => {
    const t = await seedSignIn(h);
    const r = await h.run(['exec', '--', process.execPath, CHILD, 'IDCLI_ACCESS_TOKEN']);
    expect(r.code, r.stderr).toBe(0);
    const report = reportIn(r.stdout);
    expect(report.token).toBe(t.access_token);
    // Both processes: the command's own line, and idcli's (the command's parent).
    expect(report.self).toContain(CHILD);
    expect(report.parent).toContain('exec');
    expect(report.self).not.toContain(t.access_token);
    expect(report.parent).not.toContain(t.access_token);
    expect(refreshes(h.emu)).toBe(0);
  });

  it('--env names the variable; a token under --min-ttl is refreshed first', async () => {
    const t = await seedSignIn(h, 120);
    const r = await h.run([
      'exec',
      '--env',
      'API_TOKEN',
      '--min-ttl',
      '600',
      '--',
      process.execPath,
      CHILD,
      'API_TOKEN',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(refreshes(h.emu)).toBe(1);
    const token = reportIn(r.stdout).token;
    expect(token).not.toBe(t.access_token);
    expect(token).toBe((await h.record())!.accessToken);
  });

  it('without a sign-in the command does not run: exit 3', async () => {
    const r = await h.run(['exec', '--', process.execPath, CHILD, 'IDCLI_ACCESS_TOKEN']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expectOneErrorLine(r, /not logged in/);
  });
});

describe('exec: the command and its exit', () => {
  let h: Harness;
  let watch: (raw: string) => void = () => {};
  beforeEach(async () => {
    h = await harness();
    await seedSignIn(h);
  });
  afterEach(async () => {
    await h?.close();
  });

  it("its stdin, stdout and stderr are the command's; no shell reads its arguments", async () => {
    const r = await h.run(['exec', '--', 'sh', '-c', 'cat; echo "$1" >&2', 'sh', '$HOME *'], {}, { input: 'hello\n' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('hello\n');
    expect(r.stderr).toBe('$HOME *\n');
  });

  it('words after the command are its own, options or not', async () => {
    const r = await h.run(['exec', 'sh', '-c', 'echo "$@"', 'sh', '--help', '--env', 'x']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('--help --env x\n');
  });

  it("exits with the command's status, 128 + n for signal n, 127 not found, 126 not runnable", async () => {
    expect((await h.run(['exec', '--', 'sh', '-c', 'exit 7'])).code).toBe(7);
    expect((await h.run(['exec', '--', 'sh', '-c', 'kill -TERM $$'])).code).toBe(143);
    expect((await h.run(['exec', '--', 'sh', '-c', 'kill -KILL $$'])).code).toBe(137);
    const missing = await h.run(['exec', '--', 'idcli-no-such-command']);
    expect(missing.code).toBe(127);
    expectOneErrorLine(missing, /command not found: idcli-no-such-command/);
    const plain = join(h.dir, 'not-executable');
    await writeFile(plain, '#!/bin/sh\nexit 0\n');
    await chmod(plain, 0o644);
    const refused = await h.run(['exec', '--', plain]);
    expect(refused.code).toBe(126);
    expectOneErrorLine(refused, /cannot run .*not-executable: permission denied/);
    const badint = join(h.dir, 'badint');
    await writeFile(badint, '#!/nonexistent/interpreter\nexit 0\n');
    await chmod(badint, 0o755);
    const interpreter = await h.run(['exec', '--', badint]);
    expect(interpreter.code).toBe(127);
    expectOneErrorLine(interpreter, /cannot run .*badint: its interpreter \(the #! line\) was not found/);
  });

  it.each(['SIGINT', 'SIGTERM', 'SIGHUP'] as const)('passes %s on and exits as the command did', async (signal) => {
    let stdout = '';
    const r = await h.run(
      ['exec', '--', process.execPath, CHILD, 'IDCLI_ACCESS_TOKEN', 'wait'],
      {},
      {
        // A session of its own: run from a terminal, the suite's foreground group would make SIGINT the terminal's.
        prefix: ['setsid'],
        onSpawn: (idcli) => {
          idcli.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
          void until(() => (stdout.includes('ready\n') ? true : undefined), 20_000, 'the command to start').then(() =>
            idcli.kill(signal),
          );
        },
      },
    );
    const n = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 }[signal];
    expect(r.stdout).toContain(`got ${signal}\n`);
    expect(r.code, r.stderr).toBe(40 + n);
  });

  it('a Ctrl-C typed at the terminal reaches the command once, not again through idcli', async () => {
    let stage = 0;
    // `exec`: a shell between the terminal and idcli would die of the Ctrl-C itself, and the terminal with it.
    const r = await onTerminal(
      `exec ${IDCLI} --verbose exec -- ${process.execPath} ${CHILD} IDCLI_ACCESS_TOKEN count`,
      {
        env: h.env(),
        timeoutMs: 30_000,
        keyboard: (type) => {
          // Ctrl-C once the command runs; `q` once the command got it and idcli has said what it did with its own.
          const step = (raw: string) => {
            if (stage === 0 && raw.includes('ready')) {
              stage = 1;
              type('\x03');
            } else if (stage === 1 && raw.includes('SIGINT 1') && /SIGINT (not )?passed on/.test(raw)) {
              stage = 2;
              type('q\n');
            }
          };
          watch = step;
        },
        onOutput: (raw) => watch(raw),
      },
    );
    expect(r.raw).toContain('SIGINT not passed on: the terminal sent it to the command too');
    expect(r.raw, r.raw).toContain('count=1');
    expect(r.code).toBe(130);
  });

  it('refuses an --env that is not a variable name, before anything runs', async () => {
    for (const name of ['1X', 'A-B', 'A=B', '']) {
      const r = await h.run(['exec', '--env', name, '--', 'sh', '-c', 'echo ran']);
      expect(r.code, name).toBe(2);
      expect(r.stdout).toBe('');
      expectOneErrorLine(r, /--env must be an environment variable name/);
    }
  });

  it('refuses an --env the dynamic loader or a shell reads, before anything runs', async () => {
    for (const name of ['LD_PRELOAD', 'LD_LIBRARY_PATH', 'DYLD_INSERT_LIBRARIES', 'PATH', 'IFS', 'ENV', 'BASH_ENV']) {
      const r = await h.run(['exec', '--env', name, '--', 'sh', '-c', 'echo ran']);
      expect(r.code, name).toBe(2);
      expect(r.stdout).toBe('');
      expectOneErrorLine(r, new RegExp(`--env ${name} would have the dynamic loader or a shell read the token`));
    }
    for (const name of ['SHELLOPTS', 'PS4', 'NODE_OPTIONS'])
      expect((await h.run(['exec', '--env', name, '--', 'sh', '-c', 'echo ran'])).code, name).toBe(2);
  });

  it('needs a command', async () => {
    const r = await h.run(['exec', '--']);
    expect(r.code).toBe(2);
    expectOneErrorLine(r, /missing argument <command>/);
  });
});

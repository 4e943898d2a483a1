/**
 * `idcli exec` in this process: the command (a real process, which exec spawns) gets the token in its environment and
 * in no command line, the words after it are its own, its exit status is idcli's, and a mistaken command line runs
 * nothing. What idcli does as a process (its stdio handed on, stop signals, a killed command) is in
 * test/e2e/exec.test.ts.
 */
import { existsSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeEachStore, harness, type Harness } from '../../support/harness.js';
import { expectOneErrorLine } from '../../support/cli.js';
import { refreshes, seedSignIn } from '../../support/credential.js';

const CHILD = join(import.meta.dirname, '..', '..', 'support', 'fixtures', 'exec-child.mjs');
type Report = { token?: string; self: string; parent: string };
/** The command's stdout is the test runner's here, so it writes what it got to a file. */
const reportOf = async (file: string): Promise<Report> => JSON.parse(await readFile(file, 'utf8')) as Report;

describeEachStore('exec', (store) => {
  let h: Harness;
  let out: string;
  beforeEach(async () => {
    h = await harness({ store, recordItems: 0 });
    out = join(h.dir, 'report.json');
  });
  afterEach(async () => {
    await h?.close();
  });

  it('gives the command the access token in its environment, in no command line', async () => {
    const t = await seedSignIn(h);
    const r = await h.command(['exec', '--', process.execPath, CHILD, 'IDCLI_ACCESS_TOKEN', 'to', out]);
    expect(r.code, r.stderr).toBe(0);
    const report = await reportOf(out);
    expect(report.token).toBe(t.access_token);
    expect(report.self).toContain(CHILD);
    expect(report.self).not.toContain(t.access_token);
    expect(report.parent).not.toContain(t.access_token);
    expect(refreshes(h.emu)).toBe(0);
  });

  it('--env names the variable; a token under --min-ttl is refreshed first', async () => {
    const t = await seedSignIn(h, 120);
    const r = await h.command([
      'exec',
      '--env',
      'API_TOKEN',
      '--min-ttl',
      '600',
      '--',
      process.execPath,
      CHILD,
      'API_TOKEN',
      'to',
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(refreshes(h.emu)).toBe(1);
    const token = (await reportOf(out)).token;
    expect(token).not.toBe(t.access_token);
    expect(token).toBe((await h.record())!.accessToken);
  });

  it('without a sign-in the command does not run: exit 3', async () => {
    const r = await h.command(['exec', '--', process.execPath, CHILD, 'IDCLI_ACCESS_TOKEN', 'to', out]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(existsSync(out)).toBe(false);
    expectOneErrorLine(r, /not logged in/);
  });
});

describe('exec: the command and its exit', () => {
  let h: Harness;
  /** Where a command that ran would leave its mark. */
  let ran: string;
  beforeEach(async () => {
    h = await harness({ recordItems: 0 });
    ran = join(h.dir, 'ran');
    await seedSignIn(h);
  });
  afterEach(async () => {
    await h?.close();
  });

  it('words after the command are its own, options or not', async () => {
    const r = await h.command(['exec', 'sh', '-c', 'echo "$@" > "$RAN"', 'sh', '--help', '--env', 'x'], { RAN: ran });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(await readFile(ran, 'utf8')).toBe('--help --env x\n');
  });

  it("exits with the command's status, 127 not found, 126 not runnable", async () => {
    expect((await h.command(['exec', '--', 'sh', '-c', 'exit 7'])).code).toBe(7);
    const missing = await h.command(['exec', '--', 'idcli-no-such-command']);
    expect(missing.code).toBe(127);
    expectOneErrorLine(missing, /command not found: idcli-no-such-command/);
    const plain = join(h.dir, 'not-executable');
    await writeFile(plain, '#!/bin/sh\nexit 0\n');
    await chmod(plain, 0o644);
    const refused = await h.command(['exec', '--', plain]);
    expect(refused.code).toBe(126);
    expectOneErrorLine(refused, /cannot run .*not-executable: permission denied/);
    const badint = join(h.dir, 'badint');
    await writeFile(badint, '#!/nonexistent/interpreter\nexit 0\n');
    await chmod(badint, 0o755);
    const interpreter = await h.command(['exec', '--', badint]);
    expect(interpreter.code).toBe(127);
    expectOneErrorLine(interpreter, /cannot run .*badint: its interpreter \(the #! line\) was not found/);
  });

  it('refuses an --env that is not a variable name, before anything runs', async () => {
    for (const name of ['1X', 'A-B', 'A=B', '']) {
      const r = await h.command(['exec', '--env', name, '--', 'sh', '-c', 'echo ran > "$1"', 'sh', ran]);
      expect(r.code, name).toBe(2);
      expect(r.stdout).toBe('');
      expectOneErrorLine(r, /--env must be an environment variable name/);
    }
    expect(existsSync(ran)).toBe(false);
  });

  it('refuses an --env the dynamic loader or a shell reads, before anything runs', async () => {
    for (const name of ['LD_PRELOAD', 'LD_LIBRARY_PATH', 'DYLD_INSERT_LIBRARIES', 'PATH', 'IFS', 'ENV', 'BASH_ENV']) {
      const r = await h.command(['exec', '--env', name, '--', 'sh', '-c', 'echo ran > "$1"', 'sh', ran]);
      expect(r.code, name).toBe(2);
      expect(r.stdout).toBe('');
      expectOneErrorLine(r, new RegExp(`--env ${name} would have the dynamic loader or a shell read the token`));
    }
    for (const name of ['SHELLOPTS', 'PS4', 'NODE_OPTIONS'])
      expect(
        (await h.command(['exec', '--env', name, '--', 'sh', '-c', 'echo ran > "$1"', 'sh', ran])).code,
        name,
      ).toBe(2);
    expect(existsSync(ran)).toBe(false);
  });

  it('needs a command', async () => {
    const r = await h.command(['exec', '--']);
    expect(r.code).toBe(2);
    expectOneErrorLine(r, /missing argument <command>/);
  });
});

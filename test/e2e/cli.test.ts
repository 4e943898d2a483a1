// Needs a process: what the built CLI prints without loading it (version, help), and stdout into a pipe.
/**
 * The version is written into the CLI by the build, and bin/idcli.cjs answers --version and --help (-h, or no
 * arguments) from files the build made, without loading the CLI: only the built CLI can show them. A short output
 * (a token) is written straight to stdout, into a pipe whose reader left or is slow. Help, mistakes and config run in
 * process, in test/cli.test.ts. The tests run at the same time, each with a config directory of its own.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'vitest';
import { baseEnv, BIN, runCli, tempDir } from '../support/cli.js';

const sh = promisify(execFile);

/** Runs `test` with a fresh config directory and the environment of a run that uses it. */
async function withConfig(test: (dir: string, env: Record<string, string | undefined>) => Promise<void>) {
  const dir = await tempDir();
  try {
    await test(dir.path, baseEnv({ IDCLI_CONFIG_DIR: dir.path, IDCLI_CREDENTIAL_STORE: 'file' }));
  } finally {
    await dir.cleanup();
  }
}

/** The environment without its unset names, for a child run through bash. */
const defined = (env: Record<string, string | undefined>): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined));

describe.concurrent('help and version', () => {
  it('--version prints the package version', ({ expect }) =>
    withConfig(async (_dir, env) => {
      const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
      const r = await runCli(['--version'], { env });
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(pkg.version);
    }));

  it('the help page printed without loading the CLI is the page the CLI renders, for --help, -h and no arguments', ({
    expect,
  }) =>
    withConfig(async (_dir, env) => {
      const asked = [['--help'], ['-h'], []];
      const [rendered, ...printed] = await Promise.all([['help'], ...asked].map((args) => runCli(args, { env })));
      expect(rendered!.code).toBe(0);
      expect(rendered!.stdout).toContain('Usage: idcli');
      printed.forEach((r, i) => {
        expect(r.code, asked[i]!.join(' ')).toBe(0);
        expect(r.stdout, asked[i]!.join(' ')).toBe(rendered!.stdout);
      });
    }));
});

describe.concurrent('short outputs written straight to stdout', () => {
  it('a token printed into a pipe whose reader already left: exit 0, nothing on stderr', ({ expect }) =>
    withConfig(async (dir, env) => {
      const tokenEnv = defined({ ...env, IDCLI_ACCESS_TOKEN: 'a'.repeat(120_000) });
      // `true` leaves without reading; 120 kB (under the 128 kB limit of one environment string) cannot fit a 64 kB pipe buffer, so the write meets EPIPE.
      for (let i = 0; i < 3; i++) {
        // --norc: a `bash -c` with a socket for stdin (Node's pipes) would read ~/.bashrc as if run through sshd.
        const r = await sh(
          'bash',
          ['--norc', '-c', `"${process.execPath}" "${BIN}" token 2>"$ERR" | true; echo "\${PIPESTATUS[0]}"`],
          { env: { ...tokenEnv, ERR: join(dir, 'stderr.txt') }, encoding: 'utf8' },
        );
        expect(r.stdout.trim()).toBe('0');
        expect(await readFile(join(dir, 'stderr.txt'), 'utf8')).toBe('');
      }
    }));

  it('a token larger than a pipe buffer reaches a slow reader whole', ({ expect }) =>
    withConfig(async (_dir, env) => {
      const token = 'b'.repeat(120_000);
      const tokenEnv = defined({ ...env, IDCLI_ACCESS_TOKEN: token });
      // The reader stops for a while only once the first byte has come, so idcli always meets a full pipe, however
      // long it took to start; it then counts that byte and the rest.
      const reader = `(IFS= read -r -n 1 -d '' first; sleep 0.3; echo $(( $(wc -c) + \${#first} )))`;
      const r = await sh('bash', ['--norc', '-c', `"${process.execPath}" "${BIN}" token | ${reader}`], {
        env: tokenEnv,
        encoding: 'utf8',
      });
      expect(r.stdout.trim()).toBe(String(token.length + 1));
    }));
});

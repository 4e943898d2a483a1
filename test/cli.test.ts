// Help, mistaken command lines and config, each command run in process (test/support/run-command.ts); the version,
// which the build writes into the CLI, the help page the built CLI prints without loading it, and short outputs into
// a pipe are in test/e2e/cli.test.ts.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { baseEnv, tempDir } from './support/cli.js';
import { runCommand } from './support/run-command.js';

let dir: { path: string; cleanup: () => Promise<void> };
let env: Record<string, string | undefined>;
beforeEach(async () => {
  dir = await tempDir();
  env = baseEnv({ IDCLI_CONFIG_DIR: dir.path, IDCLI_CREDENTIAL_STORE: 'file' });
});
afterEach(() => dir.cleanup());

const UUID = '4f9c0a1e-1234-4abc-8def-0123456789ab';

describe('help', () => {
  it('--help lists every command of the contract with examples', async () => {
    const r = await runCommand(['--help'], { env });
    expect(r.code).toBe(0);
    for (const c of ['login', 'token', 'list', 'status', 'logout', 'config', 'doctor', 'completion'])
      expect(r.stdout).toContain(`${c} `);
    expect(r.stdout).toContain('Examples:');
    expect(r.stdout).toContain('Exit codes:');
  });
  it.each([
    ['login', ['--prompt', '--login-hint', '--ui-locales', '--scope', '--no-browser', '--timeout']],
    ['token', ['--refresh', '--json', '--min-ttl']],
    ['list', ['--page-size', '--page-index', '--limit', '--concurrency', '--count', '--max-retries']],
    ['status', ['--json']],
    ['doctor', ['--json']],
  ])('%s --help shows its options and the global ones', async (cmd, options) => {
    const r = await runCommand([cmd, '--help'], { env });
    expect(r.code).toBe(0);
    for (const o of [...options, '--profile', '--base-url', '--verbose']) expect(r.stdout).toContain(o);
    expect(r.stdout).toContain('Examples:');
  });
});

describe('usage errors exit 2 with a suggestion', () => {
  it('unknown command', async () => {
    const r = await runCommand(['tokn'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'tokn'");
    expect(r.stderr).toContain('token');
    expect(r.stdout).toBe('');
  });
  it('unknown option', async () => {
    const r = await runCommand(['token', '--jsn'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--json');
  });
  it('bad values', async () => {
    for (const args of [
      ['token', '--min-ttl', 'abc'],
      ['login', '--prompt', 'always'],
      ['list', 'users', '--concurrency', '0'],
      ['list', 'users', '--page-size', '-1'],
      ['--verbose', '--quiet', 'status'],
    ]) {
      const r = await runCommand(args, { env });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n').length, args.join(' ')).toBeLessThanOrEqual(2);
    }
  });
  it('invalid settings from env are reported with what to fix', async () => {
    const r = await runCommand(['status'], { env: { ...env, IDCLI_BASE_URL: 'http://id.example.com' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('base-url must use https');
  });
  it('a broken config file is a usage error naming the file', async () => {
    await runCommand(['config', 'set', 'scope', 'x'], { env });
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(dir.path, 'config.json'), '{broken');
    const r = await runCommand(['status'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('config.json is not valid JSON');
  });
});

describe('config set|get|unset|list', () => {
  it('round-trips values per profile and validates them', async () => {
    expect((await runCommand(['config', 'set', 'base-url', 'https://id.example.com/'], { env })).code).toBe(0);
    expect((await runCommand(['config', 'set', 'client-id', UUID, '--profile', 'stg'], { env })).code).toBe(0);
    expect(
      (await runCommand(['--profile', 'stg', 'config', 'set', 'scope', 'read:users write:users'], { env })).code,
    ).toBe(0);
    expect((await runCommand(['config', 'get', 'base-url'], { env })).stdout).toBe('https://id.example.com\n');
    expect((await runCommand(['config', 'list', '--profile', 'stg'], { env })).stdout).toBe(
      `client-id=${UUID}\nscope=read:users write:users\n`,
    );
    expect((await runCommand(['config', 'list'], { env: { ...env, IDCLI_PROFILE: 'stg' } })).stdout).toContain(
      'client-id=',
    );
    expect((await runCommand(['config', 'unset', 'scope', '--profile', 'stg'], { env })).code).toBe(0);
    expect((await runCommand(['config', 'get', 'scope', '--profile', 'stg'], { env })).stdout).toBe('');
    const file = JSON.parse(await readFile(join(dir.path, 'config.json'), 'utf8'));
    expect(file).toEqual({
      profiles: { default: { 'base-url': 'https://id.example.com' }, stg: { 'client-id': UUID } },
    });
  });
  it('refuses unknown keys and invalid values without touching the file', async () => {
    await runCommand(['config', 'set', 'base-url', 'https://id.example.com'], { env });
    const before = await readFile(join(dir.path, 'config.json'), 'utf8');
    const r1 = await runCommand(['config', 'set', 'bse-url', 'x'], { env });
    expect(r1.code).toBe(2);
    expect(r1.stderr).toContain("did you mean 'base-url'");
    const r2 = await runCommand(['config', 'set', 'client-id', 'not-a-uuid'], { env });
    expect(r2.code).toBe(2);
    expect(await readFile(join(dir.path, 'config.json'), 'utf8')).toBe(before);
  });
  it('flag > env > config file for the effective settings', async () => {
    await runCommand(['config', 'set', 'base-url', 'https://file.example.com'], { env });
    // An invalid env value proves env is read over the file; a valid flag then wins over the invalid env value.
    const viaEnv = await runCommand(['status'], { env: { ...env, IDCLI_BASE_URL: 'http://env.example.com' } });
    expect(viaEnv.stderr).toContain("'http://env.example.com'");
    const viaFlag = await runCommand(['status', '--base-url', 'http://flag.example.com'], {
      env: { ...env, IDCLI_BASE_URL: 'https://env.example.com' },
    });
    expect(viaFlag.stderr).toContain("'http://flag.example.com'");
  });
});

describe('the help page', () => {
  it('is the page `help` renders, for --help, -h and no arguments', async () => {
    const rendered = await runCommand(['help'], { env });
    expect(rendered.code).toBe(0);
    expect(rendered.stdout).toContain('Usage: idcli');
    for (const args of [['--help'], ['-h'], []]) {
      const r = await runCommand(args, { env });
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).toBe(rendered.stdout);
    }
  });
});

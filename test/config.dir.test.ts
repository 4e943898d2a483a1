/**
 * What config.json holds, each command run in process: a "__proto__" profile, invalid UTF-8, a key given twice, an
 * escape sequence in a value, a byte order mark and an empty IDCLI_PROFILE are each a one-line configuration error
 * (exit 2) naming the file, or read as the user meant. Where the config directory is and what happens when it cannot
 * be used is in test/e2e/config-dir.test.ts.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { configEnv, expectConfigError } from './support/config-dir.js';
import { type CliResult, tempDir } from './support/cli.js';
import { runCommand } from './support/run-command.js';

let tmp: { path: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  tmp = await tempDir('idcli-configdir-');
});
afterEach(async () => {
  await tmp.cleanup();
});

function idcli(args: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  return runCommand(args, {
    env: configEnv(env),
  });
}

/** A private directory of the user the command runs as (this process's). */
async function ownDir(path: string): Promise<string> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  return path;
}

describe('what config.json holds', () => {
  it('a "__proto__" profile is refused by every command, and `config set` leaves the file as it was', async () => {
    const dir = await ownDir(join(tmp.path, 'idcli'));
    // Written out: in an object literal, __proto__ would set the prototype, not a key.
    const text = '{"profiles":{"__proto__":{"base-url":"https://a.example.com"},"default":{"scope":"x"}}}';
    await writeFile(join(dir, 'config.json'), text);
    const message = `error: ${dir}/config.json: '__proto__' is not a valid profile name; a profile name is`;
    // Once, this listed the base-url of "__proto__" one character a line, as if it were a profile.
    const list = await idcli(['--profile', 'base-url', 'config', 'list'], { IDCLI_CONFIG_DIR: dir });
    expectConfigError(list, message);
    expect(list.stdout).toBe('');
    for (const args of [
      ['--profile', 'base-url', 'config', 'set', 'scope', 'y'],
      ['config', 'set', 'scope', 'y'],
      ['config', 'unset', 'scope'],
      ['status'],
    ]) {
      expectConfigError(await idcli(args, { IDCLI_CONFIG_DIR: dir }), message);
    }
    expect(await readFile(join(dir, 'config.json'), 'utf8')).toBe(text);
  });

  it('invalid UTF-8, a key given twice or an escape sequence in a value: exit 2 naming the file, nothing raw printed', async () => {
    const dir = await ownDir(join(tmp.path, 'idcli'));
    const path = join(dir, 'config.json');
    const files: [Buffer | string, string][] = [
      [
        Buffer.concat([
          Buffer.from('{"profiles":{"default":{"scope":"'),
          Buffer.from([0xc3, 0x28]),
          Buffer.from('"}}}'),
        ]),
        `error: ${path} is not valid UTF-8`,
      ],
      [
        '{"profiles":{"default":{"scope":"a"},"default":{"scope":"b"}}}',
        `error: ${path} holds the key 'default' twice`,
      ],
      ['{"profiles":{"default":{"scope":"a","scope":"b"}}}', `error: ${path} holds the key 'scope' twice`],
      [
        JSON.stringify({ profiles: { default: { scope: 'a\u001b]0;owned\u0007\u001b[2J' } } }),
        `error: ${path}: 'scope' in profile 'default' holds a control character`,
      ],
    ];
    for (const [content, message] of files) {
      await writeFile(path, content);
      for (const args of [
        ['config', 'list'],
        ['config', 'get', 'scope'],
        ['config', 'set', 'scope', 'y'],
        ['status'],
      ]) {
        const r = await idcli(args, { IDCLI_CONFIG_DIR: dir });
        expectConfigError(r, message);
        expect(r.stdout + r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
      }
      expect(await readFile(path)).toEqual(Buffer.from(content));
    }
  });

  it('`config set` refuses a value holding a control character, and the file keeps what it had', async () => {
    const dir = await ownDir(join(tmp.path, 'idcli'));
    const env = { IDCLI_CONFIG_DIR: dir };
    expect((await idcli(['config', 'set', 'scope', 'read'], env)).code).toBe(0);
    for (const [key, value] of [
      ['scope', 'read\u001b]0;owned\u0007'],
      ['base-url', 'https://id.example.com/\u001b[2J'],
    ]) {
      const r = await idcli(['config', 'set', key!, value!], env);
      expectConfigError(r, `error: ${key} must not hold control characters`);
      expect(r.stderr).not.toContain('\u001b');
    }
    const list = await idcli(['config', 'list'], env);
    expect([list.code, list.stdout]).toEqual([0, 'scope=read\n']);
  });

  it('a profile named like an Object.prototype member reads as empty and is written as any other', async () => {
    const dir = await ownDir(join(tmp.path, 'idcli'));
    const env = { IDCLI_CONFIG_DIR: dir };
    for (const name of ['constructor', 'toString']) {
      const before = await idcli(['--profile', name, 'config', 'list'], env);
      expect([before.code, before.stdout]).toEqual([0, '']);
      expect((await idcli(['--profile', name, 'config', 'set', 'scope', 'y'], env)).code).toBe(0);
    }
    const list = await idcli(['--profile', 'constructor', 'config', 'list'], env);
    expect([list.code, list.stdout]).toEqual([0, 'scope=y\n']);
    const saved = JSON.parse(await readFile(join(dir, 'config.json'), 'utf8')) as unknown;
    expect(saved).toEqual({ profiles: { constructor: { scope: 'y' }, toString: { scope: 'y' } } });
  });

  it('a file that starts with a UTF-8 byte order mark is read, and written back without it', async () => {
    const dir = await ownDir(join(tmp.path, 'idcli'));
    await writeFile(join(dir, 'config.json'), '\uFEFF{"profiles":{"default":{"scope":"x"}}}\r\n');
    const get = await idcli(['config', 'get', 'scope'], { IDCLI_CONFIG_DIR: dir });
    expect([get.code, get.stdout, get.stderr]).toEqual([0, 'x\n', '']);
    expect((await idcli(['config', 'set', 'scope', 'y'], { IDCLI_CONFIG_DIR: dir })).code).toBe(0);
    const saved = await readFile(join(dir, 'config.json'), 'utf8');
    expect(saved.startsWith('{')).toBe(true);
    expect(JSON.parse(saved)).toEqual({ profiles: { default: { scope: 'y' } } });
  });

  it('an empty IDCLI_PROFILE is unset: the default profile is used', async () => {
    const dir = await ownDir(join(tmp.path, 'idcli'));
    await writeFile(join(dir, 'config.json'), '{"profiles":{"default":{"scope":"x"}}}');
    const list = await idcli(['config', 'list'], { IDCLI_CONFIG_DIR: dir, IDCLI_PROFILE: '' });
    expect([list.code, list.stdout, list.stderr]).toEqual([0, 'scope=x\n', '']);
    const status = await idcli(['status'], { IDCLI_CONFIG_DIR: dir, IDCLI_PROFILE: '' });
    expect(status.code, status.stderr).toBe(3);
    expect(status.stdout).toMatch(/^Profile: +default$/m);
    // An empty --profile is given on purpose, and refused.
    expectConfigError(
      await idcli(['--profile', '', 'config', 'list'], { IDCLI_CONFIG_DIR: dir }),
      "invalid profile name ''",
    );
  });
});

/**
 * Broken local setups, each command run in process: an oversized config.json is refused unread; the config directory
 * is kept private like the credentials directory; logout never deletes through a symlinked directory. A FIFO where a
 * file should be, whose fault would be a hang, is in test/e2e/odd-files.test.ts.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../src/store/file-store.js';
import { cliEnv, eachTest } from './support/list.js';
import { runCommand } from './support/run-command.js';
import { storeSignIn } from './support/sign-in.js';

const ctx = eachTest(['{"id":1}'], 'stored');

const key = () => ({ baseUrl: ctx.emu.baseUrl, clientId: ctx.emu.client.id, profile: 'default' });

function idcli(args: string[], extra: Record<string, string | undefined> = {}) {
  return runCommand(args, { env: cliEnv(ctx.env, extra) });
}

describe('config.json', () => {
  it('over 1 MB is refused with exit 2', async () => {
    const padding = ' '.repeat(2 * 1024 * 1024);
    await writeFile(join(ctx.env.configDir, 'config.json'), `{"profiles":{}${padding}}`);
    const r = await idcli(['config', 'list']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/config\.json is larger than 1 MB/);
  }, 30_000);

  it('just under 1 MB is still read', async () => {
    const padding = ' '.repeat(1024 * 1024 - 100);
    await writeFile(join(ctx.env.configDir, 'config.json'), `{"profiles":{"default":{"scope":"x"}}${padding}}`);
    const r = await idcli(['config', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('scope=x\n');
  }, 30_000);

  it('a config directory open to other users is tightened to 0700 with a warning, like the credentials one', async () => {
    await writeFile(join(ctx.env.configDir, 'config.json'), '{"profiles":{}}');
    await chmod(ctx.env.configDir, 0o755);
    const r = await idcli(['config', 'list']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/was accessible by other users \(mode 0755\); tightened to 0700/);
    expect((await stat(ctx.env.configDir)).mode & 0o777).toBe(0o700);
    const again = await idcli(['config', 'list']);
    expect(again.stderr).toBe('');
  }, 30_000);

  it('`config set` creates a private directory and a private file', async () => {
    const dir = join(ctx.env.configDir, 'fresh');
    const r = await idcli(['config', 'set', 'scope', 'x'], { IDCLI_CONFIG_DIR: dir });
    expect(r.code).toBe(0);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, 'config.json'))).mode & 0o777).toBe(0o600);
  }, 30_000);
});

describe('logout', () => {
  it('refuses a symlinked credentials directory and deletes nothing in its target', async () => {
    const store = new FileStore({ configDir: ctx.env.configDir });
    const record = await store.pathFor(key());
    const elsewhere = await mkdtemp(join(tmpdir(), 'idcli-elsewhere-'));
    try {
      const victim = join(elsewhere, record.slice(store.dir.length + 1));
      await writeFile(victim, 'keep me');
      await symlink(elsewhere, store.dir);
      const r = await idcli(['logout'], { IDCLI_CREDENTIAL_STORE: 'file' });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/refusing to follow the symbolic link/);
      expect(existsSync(victim)).toBe(true);
      expect(await readFile(victim, 'utf8')).toBe('keep me');
      // Reads refuse the same directory the same way.
      const read = await idcli(['token'], { IDCLI_CREDENTIAL_STORE: 'file' });
      expect(read.code).toBe(2);
      expect(read.stderr).toMatch(/refusing to follow the symbolic link/);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  }, 30_000);

  it('still removes a record from a real directory', async () => {
    await storeSignIn({ emu: ctx.emu, configDir: ctx.env.configDir, ttlSec: 600 });
    const path = await new FileStore({ configDir: ctx.env.configDir }).pathFor(key());
    expect(existsSync(path)).toBe(true);
    const r = await idcli(['logout'], { IDCLI_CREDENTIAL_STORE: 'file' });
    expect(r.code).toBe(0);
    expect(existsSync(path)).toBe(false);
  }, 30_000);
});

/**
 * Broken local setups: a FIFO (or anything but a regular file) where config.json, the credential record or the lock
 * file should be is refused at once instead of blocking; an oversized config.json is refused unread; the config
 * directory is kept private like the credentials directory; logout never deletes through a symlinked directory.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/file-store.js';
import { lockPathFor } from '../../src/store/lock.js';
import type { Emulator } from '../emulator/index.js';
import { cliEnv, list, type ListEnv, eachTest } from '../list/helpers.js';
import { runCli } from '../support/cli.js';
import { storeSignIn } from '../support/sign-in.js';

let emu: Emulator;
let env: ListEnv & { cleanup: () => Promise<void> };

eachTest(
  ['{"id":1}'],
  (e, v) => {
    emu = e;
    env = v;
  },
  'stored',
);

const key = () => ({ baseUrl: emu.baseUrl, clientId: emu.client.id, profile: 'default' });

async function mkfifo(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  execFileSync('mkfifo', ['-m', '600', path]);
}

/** Runs the CLI with a deadline well under the FIFO's "forever". */
function idcli(args: string[], extra: Record<string, string | undefined> = {}) {
  return runCli(args, { env: cliEnv(env, extra), timeoutMs: 15_000 });
}

describe('config.json', () => {
  it('a FIFO is refused with exit 2 instead of blocking', async () => {
    await mkfifo(join(env.configDir, 'config.json'));
    const r = await idcli(['status']);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/config\.json is not a regular file; remove it/);
  }, 30_000);

  it('over 1 MB is refused with exit 2', async () => {
    const padding = ' '.repeat(2 * 1024 * 1024);
    await writeFile(join(env.configDir, 'config.json'), `{"profiles":{}${padding}}`);
    const r = await idcli(['config', 'list']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/config\.json is larger than 1 MB/);
  }, 30_000);

  it('just under 1 MB is still read', async () => {
    const padding = ' '.repeat(1024 * 1024 - 100);
    await writeFile(join(env.configDir, 'config.json'), `{"profiles":{"default":{"scope":"x"}}${padding}}`);
    const r = await idcli(['config', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('scope=x\n');
  }, 30_000);

  it('a config directory open to other users is tightened to 0700 with a warning, like the credentials one', async () => {
    await writeFile(join(env.configDir, 'config.json'), '{"profiles":{}}');
    await chmod(env.configDir, 0o755);
    const r = await idcli(['config', 'list']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/was accessible by other users \(mode 0755\); tightened to 0700/);
    expect((await stat(env.configDir)).mode & 0o777).toBe(0o700);
    const again = await idcli(['config', 'list']);
    expect(again.stderr).toBe('');
  }, 30_000);

  it('`config set` creates a private directory and a private file', async () => {
    const dir = join(env.configDir, 'fresh');
    const r = await idcli(['config', 'set', 'scope', 'x'], { IDCLI_CONFIG_DIR: dir });
    expect(r.code).toBe(0);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, 'config.json'))).mode & 0o777).toBe(0o600);
  }, 30_000);
});

describe('the credential record', () => {
  it('a FIFO is refused with exit 2 (a local fault to remove) instead of blocking', async () => {
    const path = await new FileStore({ configDir: env.configDir }).pathFor(key());
    await mkfifo(path);
    const r = await idcli(['token']);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is not a regular file; remove it and run `idcli login`/);
  }, 30_000);
});

describe('the lock file', () => {
  it('a FIFO is refused with exit 2 (a local fault to remove) instead of blocking a refresh', async () => {
    await storeSignIn({ emu, configDir: env.configDir, ttlSec: -10 });
    await mkfifo(lockPathFor(env.configDir, key()));
    const r = await idcli(['token']);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\.lock is not a regular file, so it cannot serve as a lock; remove it/);
  }, 30_000);

  it('`list` with a FIFO lock ends at once too (it used to ignore Ctrl-C there)', async () => {
    await storeSignIn({ emu, configDir: env.configDir, ttlSec: -10 });
    await mkfifo(lockPathFor(env.configDir, key()));
    const started = Date.now();
    const r = await list(env, ['/v1/items'], { timeoutMs: 45_000 });
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    // Well below the 30 s lock timeout a waiter would sit out, with room for a loaded machine's start-up.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r.requests).toHaveLength(0);
  }, 60_000);
});

describe('logout', () => {
  it('refuses a symlinked credentials directory and deletes nothing in its target', async () => {
    const store = new FileStore({ configDir: env.configDir });
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
    await storeSignIn({ emu, configDir: env.configDir, ttlSec: 600 });
    const path = await new FileStore({ configDir: env.configDir }).pathFor(key());
    expect(existsSync(path)).toBe(true);
    const r = await idcli(['logout'], { IDCLI_CREDENTIAL_STORE: 'file' });
    expect(r.code).toBe(0);
    expect(existsSync(path)).toBe(false);
  }, 30_000);
});

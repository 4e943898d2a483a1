import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { FileStore } from '../../src/store/file-store.js';
import { accountName } from '../../src/store/record.js';
import { KEY, runFixture, sampleRecord, waitForExit, waitForLine } from '../support/store.js';
import { tempDir } from '../support/cli.js';
import { rejection } from '../support/rejection.js';

const POSIX = process.platform !== 'win32';

describe('file store', () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let warnings: string[];
  let store: FileStore;

  beforeEach(async () => {
    dir = await tempDir();
    warnings = [];
    store = new FileStore({ configDir: join(dir.path, 'cfg'), warn: (m) => warnings.push(m) });
  });
  afterEach(() => dir.cleanup());

  it('reads null before anything was written, without creating directories', async () => {
    expect(await store.read(KEY)).toBeNull();
    await expect(stat(join(dir.path, 'cfg'))).rejects.toThrow();
  });

  it('writes, reads back, overwrites and deletes a record', async () => {
    await store.write(KEY, sampleRecord());
    expect(await store.read(KEY)).toEqual(sampleRecord());
    await store.write(KEY, sampleRecord({ generation: 2, refreshToken: 'rt-2' }));
    expect(await store.read(KEY)).toEqual(sampleRecord({ generation: 2, refreshToken: 'rt-2' }));
    expect(await store.delete(KEY)).toBe(true);
    expect(await store.read(KEY)).toBeNull();
    expect(await store.delete(KEY)).toBe(false);
    expect(warnings).toEqual([]);
  });

  it('keeps profiles apart, one file per account named by its base64url spelling', async () => {
    const other = { ...KEY, profile: 'work' };
    await store.write(KEY, sampleRecord({ refreshToken: 'rt-default' }));
    await store.write(other, sampleRecord({ refreshToken: 'rt-work' }));
    expect((await store.read(KEY))?.refreshToken).toBe('rt-default');
    expect((await store.read(other))?.refreshToken).toBe('rt-work');
    const names = await readdir(store.dir);
    expect(names.sort()).toEqual(
      [await store.pathFor(KEY), await store.pathFor(other)].map((p) => p.slice(store.dir.length + 1)).sort(),
    );
    for (const name of names) expect(name).toMatch(/^a-[A-Za-z0-9_-]+\.json$/);
  });

  it('describes itself by its directory', () => {
    expect(store.describe()).toBe(`file ${store.dir}${store.dir.includes('\\') ? '\\' : '/'}…`);
  });

  it.runIf(POSIX)('creates the directory 0700 and the file 0600', async () => {
    await store.write(KEY, sampleRecord());
    expect((await stat(store.dir)).mode & 0o777).toBe(0o700);
    expect((await stat(await store.pathFor(KEY))).mode & 0o777).toBe(0o600);
  });

  it.runIf(POSIX)('tightens modes that are too open, and says so', async () => {
    await store.write(KEY, sampleRecord());
    await chmod(await store.pathFor(KEY), 0o644);
    await chmod(store.dir, 0o755);
    expect(await store.read(KEY)).toEqual(sampleRecord());
    expect((await stat(store.dir)).mode & 0o777).toBe(0o700);
    expect((await stat(await store.pathFor(KEY))).mode & 0o777).toBe(0o600);
    expect(warnings).toHaveLength(2);
    expect(warnings.join('\n')).toMatch(/0755.*0700/);
    expect(warnings.join('\n')).toMatch(/0644.*0600/);
  });

  it.runIf(POSIX)('refuses to follow a symlink in place of the record', async () => {
    await store.write(KEY, sampleRecord());
    const elsewhere = join(dir.path, 'elsewhere.json');
    await writeFile(elsewhere, await readFile(await store.pathFor(KEY)));
    const path = await store.pathFor(KEY);
    await store.delete(KEY);
    await symlink(elsewhere, path);
    const readErr = await rejection(store.read(KEY));
    expect(readErr.code).toBe('SYMLINK_REFUSED');
    expect(readErr.exitCode).toBe(ExitCode.USAGE);
    const writeErr = await rejection(store.write(KEY, sampleRecord({ refreshToken: 'rt-planted' })));
    expect(writeErr.code).toBe('SYMLINK_REFUSED');
    expect(await readFile(elsewhere, 'utf8')).not.toContain('rt-planted');
  });

  it('turns a corrupt file into exit 3 telling to log in, without echoing its content', async () => {
    await store.write(KEY, sampleRecord());
    await writeFile(await store.pathFor(KEY), '{"refreshToken":"rt-SECRET-leak"');
    const err = await rejection(store.read(KEY));
    expect(err.exitCode).toBe(ExitCode.AUTH);
    expect(err.code).toBe('CREDENTIALS_UNREADABLE');
    expect(err.message).toContain(await store.pathFor(KEY));
    expect(err.hint).toMatch(/idcli login/);
    expect(err.message).not.toContain('SECRET');
  });

  it('leaves no temp file after a write', async () => {
    await store.write(KEY, sampleRecord());
    await store.write(KEY, sampleRecord({ generation: 2 }));
    expect(await readdir(store.dir)).toHaveLength(1);
  });

  it('keeps the old record when the writer is killed between the temp write and the rename', async () => {
    const configDir = join(dir.path, 'cfg');
    const child = runFixture('file-crash-writer', [configDir]);
    const exited = waitForExit(child);
    await waitForLine(child, 'ready');
    // The new record is complete and fsynced in its temp file at this point; only the rename is missing.
    const temps = (await readdir(store.dir)).filter((n) => n.endsWith('.tmp'));
    expect(temps).toHaveLength(1);
    expect(await readFile(join(store.dir, temps[0]!), 'utf8')).toContain('rt-new');
    child.kill('SIGKILL');
    expect((await exited).signal).toBe('SIGKILL');

    const after = new FileStore({ configDir });
    expect(await after.read(KEY)).toEqual(sampleRecord({ generation: 1, refreshToken: 'rt-old' }));

    // The orphaned temp file is swept by a later write once it is old enough that no live writer can own it.
    const orphan = join(store.dir, temps[0]!);
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
    await utimes(orphan, old, old);
    await after.write(KEY, sampleRecord({ generation: 3 }));
    expect(await readdir(store.dir)).toEqual([(await store.pathFor(KEY)).slice(store.dir.length + 1)]);
    expect((await after.read(KEY))?.generation).toBe(3);
  }, 60_000);

  it('refuses a credentials path that is not a directory', async () => {
    await mkdir(dirname(store.dir), { recursive: true });
    await writeFile(store.dir, 'x');
    const err = await rejection(store.write(KEY, sampleRecord()));
    expect(err.code).toBe('FS_REFUSED');
    expect(err.message).toBe(`cannot create ${store.dir}: ${store.dir} is a file, not a directory (ENOTDIR)`);
    expect(err.exitCode).toBe(ExitCode.USAGE);
    expect(err.hint).toBe(`remove or rename ${store.dir}, or set IDCLI_CONFIG_DIR to another directory`);
    expect((await lstat(store.dir)).isFile()).toBe(true);
  });
});

describe('file names', () => {
  it('are the base64url spelling of the account, or its SHA-256 when that would be too long for a file name', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'idcli-names-'));
    try {
      const store = new FileStore({ configDir: dir });
      const short = await store.pathFor(KEY);
      expect(short.slice(store.dir.length + 1)).toBe(`a-${Buffer.from(accountName(KEY)).toString('base64url')}.json`);
      const longKey = { ...KEY, baseUrl: `https://id.example.com/${'tenant/'.repeat(40)}` };
      const long = (await store.pathFor(longKey)).slice(store.dir.length + 1);
      expect(long).toMatch(/^h-[0-9a-f]{64}\.json$/);
      await store.write(longKey, sampleRecord({ generation: 7 }));
      expect((await store.read(longKey))?.generation).toBe(7);
      expect(await store.read(KEY)).toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

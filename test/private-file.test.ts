import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPrivateFile, replacePrivateFile, replacePrivateFileSync } from '../src/private-file.js';

const posix = process.platform !== 'win32';

describe('private files, written atomically', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'idcli-private-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('replaces a file with a private one and leaves no temp behind', async () => {
    const path = join(dir, 'f.json');
    await writeFile(path, 'old', { mode: 0o644 });
    await replacePrivateFile(path, 'new', { durable: true });
    expect(await readFile(path, 'utf8')).toBe('new');
    if (posix) expect((await lstat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['f.json']);
  });

  it('keeps the old file and removes the temp when the replacement fails', async () => {
    const path = join(dir, 'taken');
    await mkdir(path);
    await expect(replacePrivateFile(path, 'new')).rejects.toMatchObject({ code: expect.any(String) });
    expect(await readdir(dir)).toEqual(['taken']);
  });

  it('runs beforeCommit between the write and the rename', async () => {
    const path = join(dir, 'f');
    await writeFile(path, 'old');
    let seen = '';
    await replacePrivateFile(path, 'new', { beforeCommit: async () => void (seen = await readFile(path, 'utf8')) });
    expect([seen, await readFile(path, 'utf8')]).toEqual(['old', 'new']);
  });

  it('creates only a file that does not exist yet', async () => {
    const path = join(dir, 'owner');
    await createPrivateFile(path, 'a');
    await expect(createPrivateFile(path, 'b')).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await readFile(path, 'utf8')).toBe('a');
  });

  it.skipIf(!posix)(
    'sync: a temp left behind is removed first, and a link there is never written through',
    async () => {
      const path = join(dir, 'state');
      const target = join(dir, 'elsewhere');
      await writeFile(target, 'untouched');
      await symlink(target, `${path}.tmp`);
      replacePrivateFileSync(path, 'state', `${path}.tmp`);
      expect(await readFile(path, 'utf8')).toBe('state');
      expect(await readFile(target, 'utf8')).toBe('untouched');
      expect((await lstat(path)).mode & 0o777).toBe(0o600);
      expect((await readdir(dir)).sort()).toEqual(['elsewhere', 'state']);
    },
  );
});

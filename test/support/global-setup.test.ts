/** The run's copy of the CLI for other users (global-setup.ts) holds the CLI's files, not links out of it. */
import { execFile } from 'node:child_process';
import { chmod, lstat, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { tempDir } from './cli.js';
import { copyForOtherUsers } from './global-setup.js';

let dir: { path: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => dir.cleanup());

it('copies a link in dist/ as the file it points to, and leaves that file and its directory as they were', async () => {
  const root = join(dir.path, 'root');
  const outside = join(dir.path, 'outside');
  await mkdir(join(root, 'bin'), { recursive: true });
  await mkdir(join(root, 'dist'));
  await mkdir(outside, { mode: 0o700 });
  await chmod(outside, 0o700);
  await writeFile(join(root, 'bin', 'idcli.cjs'), 'bin');
  await writeFile(join(root, 'package.json'), '{}');
  await writeFile(join(outside, 'private'), 'private', { mode: 0o600 });
  await symlink(join(outside, 'private'), join(root, 'dist', 'file-link'));
  await symlink(outside, join(root, 'dist', 'dir-link'));
  const copy = join(dir.path, 'copy');
  await mkdir(copy, { mode: 0o700 });

  await copyForOtherUsers(root, copy);

  expect((await stat(join(outside, 'private'))).mode & 0o777).toBe(0o600);
  expect((await stat(outside)).mode & 0o777).toBe(0o700);
  for (const path of [join(copy, 'dist', 'file-link'), join(copy, 'dist', 'dir-link', 'private')]) {
    const info = await lstat(path);
    expect(info.isFile(), path).toBe(true);
    expect(info.mode & 0o777, path).toBe(0o644);
    expect(await readFile(path, 'utf8')).toBe('private');
  }
  expect((await lstat(join(copy, 'dist', 'dir-link'))).isDirectory()).toBe(true);
  // Another user reads the copy, and cannot read what the links pointed to.
  await chmod(dir.path, 0o755);
  const asNobody = (path: string) =>
    promisify(execFile)('runuser', ['-u', 'nobody', '--', 'cat', path]).then(
      (r) => r.stdout,
      () => undefined,
    );
  expect(await asNobody(join(copy, 'dist', 'file-link'))).toBe('private');
  expect(await asNobody(join(outside, 'private'))).toBeUndefined();
});

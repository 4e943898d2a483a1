/**
 * The private-path rule on real files of this user: which links are followed on the way to a path, and what a
 * directory others may write does to a file in it. Another user's links and files: test/list/dump-trust.test.ts.
 */
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, IdcliError } from '../../src/errors.js';
import { inspectPrivateFile, resolveTrusted } from '../../src/private-path.js';

const POSIX = process.platform !== 'win32';
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'idcli-private-path-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function refusal(f: () => unknown): IdcliError {
  try {
    f();
  } catch (err) {
    if (err instanceof IdcliError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe.runIf(POSIX)('resolveTrusted', () => {
  it('follows links of the user in their own directories, relative, absolute and through `..`', async () => {
    await mkdir(join(dir, 'dumps'));
    await writeFile(join(dir, 'dumps', 'today.ndjson'), '');
    await symlink(join('dumps', 'today.ndjson'), join(dir, 'latest.ndjson'));
    await symlink(join(dir, 'dumps'), join(dir, 'd'));
    expect(resolveTrusted(join(dir, 'latest.ndjson'), 'h')).toBe(join(dir, 'dumps', 'today.ndjson'));
    expect(resolveTrusted(join(dir, 'd', 'today.ndjson'), 'h')).toBe(join(dir, 'dumps', 'today.ndjson'));
    // `..` after a link is taken from where the link leads, as the kernel takes it.
    await mkdir(join(dir, 'a', 'b'), { recursive: true });
    await symlink(join(dir, 'a', 'b'), join(dir, 'ab'));
    expect(resolveTrusted(`${dir}/ab/../x.ndjson`, 'h')).toBe(join(dir, 'a', 'x.ndjson'));
    // A path not there yet is returned as named from the first part missing.
    expect(resolveTrusted(join(dir, 'd', 'new', 'x'), 'h')).toBe(join(dir, 'dumps', 'new', 'x'));
  });

  it('refuses a link in a directory others may write that is not sticky, even one of the user', async () => {
    const open = join(dir, 'open');
    await mkdir(open);
    await chmod(open, 0o777);
    await writeFile(join(dir, 'target'), '');
    await symlink(join(dir, 'target'), join(open, 'link'));
    const err = refusal(() => resolveTrusted(join(open, 'link'), 'name another file'));
    expect(err.exitCode).toBe(ExitCode.USAGE);
    expect(err.code).toBe('PATH_UNSAFE_LINK');
    expect(err.message).toBe(
      `refusing to follow the symbolic link ${join(open, 'link')}: it is in ${open}, which other users may write (mode 0777)`,
    );
    // Sticky, as /tmp: only the link's owner could replace it, and that is the user.
    await chmod(open, 0o1777);
    expect(resolveTrusted(join(open, 'link'), 'h')).toBe(join(dir, 'target'));
  });

  it('ends a loop of links with exit 2', async () => {
    await symlink(join(dir, 'b'), join(dir, 'a'));
    await symlink(join(dir, 'a'), join(dir, 'b'));
    expect(refusal(() => resolveTrusted(join(dir, 'a'), 'h')).code).toBe('PATH_TOO_MANY_LINKS');
  });
});

describe.runIf(POSIX)('inspectPrivateFile', () => {
  it('a file in a directory others may write without the sticky bit is refused; sticky or private, it is not', async () => {
    const open = join(dir, 'open');
    await mkdir(open);
    await chmod(open, 0o777);
    const file = join(open, 'out.ndjson');
    expect(refusal(() => inspectPrivateFile(file, 'h')).code).toBe('PATH_UNSAFE_DIRECTORY');
    expect(refusal(() => inspectPrivateFile(file, 'h')).message).toBe(
      `refusing to use ${file}: it is in ${open}, and other users may write it (mode 0777)`,
    );
    await chmod(open, 0o1777);
    expect(inspectPrivateFile(file, 'h')).toBeUndefined();
    await chmod(open, 0o700);
    await writeFile(file, '');
    expect(inspectPrivateFile(file, 'h')?.isFile()).toBe(true);
  });
});

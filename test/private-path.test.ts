/**
 * The private-path rule on real files of this user: which links are followed on the way to a path, and what a
 * directory others may write does to a file in it. Another user's links and files: test/commands/list/dump-trust.test.ts.
 */
import { chmod, chown, lchown, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, IdcliError } from '../src/errors.js';
import { checkPrivateDir, inspectPrivateFile, resolveTrusted } from '../src/private-path.js';

const POSIX = process.platform !== 'win32';
const ROOT_USER = process.getuid?.() === 0;
const NOBODY = 65534;
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

describe.runIf(ROOT_USER)('every directory on the way, up to `/`', () => {
  /** dir/l1/l2/l3/file, all the user's, but for the one `level` up from file's directory that nobody owns. */
  async function chain(level: number): Promise<{ file: string; foreign: string }> {
    const levels = [join(dir, 'l1'), join(dir, 'l1', 'l2'), join(dir, 'l1', 'l2', 'l3')];
    await mkdir(levels[2]!, { recursive: true });
    const foreign = levels[2 - level]!;
    await chown(foreign, NOBODY, NOBODY);
    return { file: join(levels[2]!, 'out.ndjson'), foreign };
  }

  it.each([1, 2])('refuses a path with a directory of nobody %i levels above its own', async (level) => {
    const { file, foreign } = await chain(level);
    for (const check of [() => resolveTrusted(file, 'h'), () => inspectPrivateFile(file, 'h')]) {
      const err = refusal(check);
      expect(err.exitCode).toBe(ExitCode.USAGE);
      expect(err.code).toBe('PATH_UNSAFE_DIRECTORY');
      expect(err.message).toBe(
        `refusing to use ${file}: ${foreign} is on the way to it, and it belongs to uid ${NOBODY}`,
      );
    }
  });

  it('refuses a directory of the user under one that others may write and that is not sticky', async () => {
    await mkdir(join(dir, 'open', 'mine'), { recursive: true });
    await chmod(join(dir, 'open'), 0o777);
    const file = join(dir, 'open', 'mine', 'out.ndjson');
    expect(refusal(() => resolveTrusted(file, 'h')).message).toBe(
      `refusing to use ${file}: ${join(dir, 'open')} is on the way to it, and other users may write it (mode 0777)`,
    );
    // Sticky, as /tmp: no one but the user can rename what is the user's in it.
    await chmod(join(dir, 'open'), 0o1777);
    expect(resolveTrusted(file, 'h')).toBe(file);
  });

  it("walks along a link's target: the user's link to a place under nobody's directory is refused", async () => {
    await mkdir(join(dir, 'theirs', 'sub'), { recursive: true });
    await chown(join(dir, 'theirs'), NOBODY, NOBODY);
    await symlink(join(dir, 'theirs', 'sub'), join(dir, 'link'));
    const err = refusal(() => resolveTrusted(join(dir, 'link', 'out.ndjson'), 'h'));
    expect(err.code).toBe('PATH_UNSAFE_DIRECTORY');
    expect(err.message).toContain(`${join(dir, 'theirs')} is on the way to it, and it belongs to uid ${NOBODY}`);
  });

  it("refuses nobody's link above the path's directory, even in a sticky directory", async () => {
    await mkdir(join(dir, 'shared'));
    await chmod(join(dir, 'shared'), 0o1777);
    await mkdir(join(dir, 'mine', 'sub'), { recursive: true });
    const planted = join(dir, 'shared', 'd');
    await symlink(join(dir, 'mine'), planted);
    await lchown(planted, NOBODY, NOBODY);
    const err = refusal(() => resolveTrusted(join(planted, 'sub', 'out.ndjson'), 'h'));
    expect(err.code).toBe('PATH_UNSAFE_LINK');
    expect(err.message).toBe(
      `refusing to follow the symbolic link ${planted}: it belongs to another user (uid ${NOBODY})`,
    );
  });

  it('refuses a private directory under one of nobody before it exists, and one that exists', async () => {
    await mkdir(join(dir, 'theirs'));
    await chown(join(dir, 'theirs'), NOBODY, NOBODY);
    const config = join(dir, 'theirs', 'mine', 'config');
    const opts = { warn: () => {}, hint: 'h', follow: true };
    expect(refusal(() => checkPrivateDir(config, opts)).message).toBe(
      `refusing to use ${config}: ${join(dir, 'theirs')} is on the way to it, and it belongs to uid ${NOBODY}`,
    );
    await mkdir(config, { recursive: true, mode: 0o700 });
    expect(refusal(() => checkPrivateDir(config, opts)).code).toBe('PATH_UNSAFE_DIRECTORY');
  });

  it("refuses a path that goes through nobody's directory and back out with `..`", async () => {
    await mkdir(join(dir, 'theirs'));
    await chown(join(dir, 'theirs'), NOBODY, NOBODY);
    await mkdir(join(dir, 'mine'), { mode: 0o700 });
    // Not join(): it would take the `..` away before idcli sees it.
    const config = `${dir}/theirs/../mine/config`;
    const err = refusal(() => checkPrivateDir(config, { warn: () => {}, hint: 'h', follow: true }));
    expect(err.code).toBe('PATH_UNSAFE_DIRECTORY');
    expect(err.message).toContain(`${join(dir, 'theirs')} is on the way to it, and it belongs to uid ${NOBODY}`);
  });

  it('refuses a sticky directory open to all as a private one, and leaves its mode alone', async () => {
    // As /tmp is for root: the user's own, yet shared by every user.
    const shared = join(dir, 'shared');
    await mkdir(shared);
    await chmod(shared, 0o1777);
    const warned: string[] = [];
    const err = refusal(() => checkPrivateDir(shared, { warn: (m) => warned.push(m), hint: 'h', follow: true }));
    expect(err.code).toBe('PATH_UNSAFE_DIRECTORY');
    expect(err.message).toBe(`refusing to use ${shared}: it is a directory shared by all users (mode 01777)`);
    expect((await stat(shared)).mode & 0o7777).toBe(0o1777);
    expect(warned).toEqual([]);
  });

  it('does not say "remove it" twice when the hint already starts with it', async () => {
    const file = join(dir, 'theirs.json');
    await writeFile(file, '');
    await chown(file, NOBODY, NOBODY);
    expect(refusal(() => inspectPrivateFile(file, 'remove it, or name another')).hint).toBe(
      'remove it, or name another',
    );
    expect(refusal(() => inspectPrivateFile(file, 'name another')).hint).toBe('remove it, or name another');
  });
});

/**
 * idcli's directory in the user's cache (src/private-cache-dir.ts): created 0700, tightened when open to others, and
 * refused, before anything is created, when another user could change it or any directory above it, so nothing is
 * loaded from it that someone else could have put there.
 */
import { chmodSync, chownSync, lchownSync, mkdirSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { privateCacheDir } from '../src/private-cache-dir.js';
import { tempDir } from './support/cli.js';

const ROOT_USER = process.getuid?.() === 0;
const NOBODY = 65534;

let dir: { path: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  dir = await tempDir('idcli-cache-');
});
afterEach(() => dir.cleanup());

describe('privateCacheDir', () => {
  it('is $XDG_CACHE_HOME/idcli, created 0700', () => {
    const got = privateCacheDir({ XDG_CACHE_HOME: join(dir.path, 'xdg'), HOME: join(dir.path, 'home') });
    expect(got).toBe(join(dir.path, 'xdg', 'idcli'));
    expect(statSync(got!).mode & 0o777).toBe(0o700);
  });

  it('is ~/.cache/idcli without an absolute XDG_CACHE_HOME, and none without an absolute HOME', () => {
    const home = join(dir.path, 'home');
    expect(privateCacheDir({ XDG_CACHE_HOME: 'relative', HOME: home })).toBe(join(home, '.cache', 'idcli'));
    expect(privateCacheDir({ HOME: 'relative' })).toBeUndefined();
    expect(privateCacheDir({})).toBeUndefined();
  });

  it('tightens a directory of the user open to others to 0700, and says so', () => {
    const open = join(dir.path, 'open');
    mkdirSync(join(open, 'idcli'), { recursive: true });
    chmodSync(join(open, 'idcli'), 0o755);
    const warned: string[] = [];
    expect(privateCacheDir({ XDG_CACHE_HOME: open }, (m) => warned.push(m))).toBe(join(open, 'idcli'));
    expect(statSync(join(open, 'idcli')).mode & 0o777).toBe(0o700);
    expect(warned).toEqual([`${join(open, 'idcli')} was accessible by other users (mode 0755); tightened to 0700`]);
  });

  it('refuses, before creating anything, a directory others may write that is not sticky', () => {
    const shared = join(dir.path, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    expect(() => privateCacheDir({ XDG_CACHE_HOME: join(shared, 'cache') })).toThrow(
      `refusing to use ${join(shared, 'cache', 'idcli')}: ${shared} is on the way to it, and other users may write it (mode 0777)`,
    );
    expect(() => privateCacheDir({ XDG_CACHE_HOME: shared })).toThrow(
      `refusing to use ${join(shared, 'idcli')}: it is in ${shared}, and other users may write it (mode 0777)`,
    );
    expect(readdirSync(shared)).toEqual([]);
  });

  it("follows the user's own link (dotfiles) to a directory of theirs", () => {
    const base = join(dir.path, 'base');
    mkdirSync(join(dir.path, 'dotfiles', 'idcli'), { recursive: true, mode: 0o700 });
    mkdirSync(base, { mode: 0o700 });
    symlinkSync(join(dir.path, 'dotfiles', 'idcli'), join(base, 'idcli'));
    expect(privateCacheDir({ XDG_CACHE_HOME: base })).toBe(join(dir.path, 'dotfiles', 'idcli'));
  });
});

describe.runIf(ROOT_USER)('privateCacheDir and another user', () => {
  it.each([0, 1, 2])('refuses a directory of nobody %i levels above the cache, creating nothing under it', (level) => {
    const levels = [join(dir.path, 'a'), join(dir.path, 'a', 'b'), join(dir.path, 'a', 'b', 'c')];
    mkdirSync(levels[2]!, { recursive: true });
    const foreign = levels[2 - level]!;
    chownSync(foreign, NOBODY, NOBODY);
    const cache = join(levels[2]!, 'idcli');
    const where = level === 0 ? `it is in ${foreign}` : `${foreign} is on the way to it`;
    expect(() => privateCacheDir({ XDG_CACHE_HOME: levels[2]! })).toThrow(
      `refusing to use ${cache}: ${where}, and it belongs to uid ${NOBODY}`,
    );
    expect(readdirSync(levels[2]!)).toEqual([]);
  });

  it("allows a sticky shared directory for the user's own cache, not for one nobody made there first", () => {
    const shared = join(dir.path, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const mine = privateCacheDir({ XDG_CACHE_HOME: shared });
    expect(mine).toBe(join(shared, 'idcli'));
    expect(statSync(mine!).mode & 0o777).toBe(0o700);
    rmSync(mine!, { recursive: true });
    mkdirSync(join(shared, 'idcli'), { mode: 0o700 });
    chownSync(join(shared, 'idcli'), NOBODY, NOBODY);
    expect(() => privateCacheDir({ XDG_CACHE_HOME: shared })).toThrow(
      `refusing to use ${join(shared, 'idcli')}: it belongs to another user (uid ${NOBODY})`,
    );
  });

  it("refuses nobody's link where the directory goes, and nobody's link above it", () => {
    const base = join(dir.path, 'base');
    mkdirSync(join(dir.path, 'elsewhere', 'idcli'), { recursive: true, mode: 0o700 });
    mkdirSync(base, { mode: 0o700 });
    symlinkSync(join(dir.path, 'elsewhere', 'idcli'), join(base, 'idcli'));
    lchownSync(join(base, 'idcli'), NOBODY, NOBODY);
    expect(() => privateCacheDir({ XDG_CACHE_HOME: base })).toThrow(
      `refusing to follow the symbolic link ${join(base, 'idcli')}: it belongs to another user (uid ${NOBODY})`,
    );
    symlinkSync(join(dir.path, 'elsewhere'), join(dir.path, 'xdg'));
    lchownSync(join(dir.path, 'xdg'), NOBODY, NOBODY);
    expect(() => privateCacheDir({ XDG_CACHE_HOME: join(dir.path, 'xdg') })).toThrow(
      `refusing to follow the symbolic link ${join(dir.path, 'xdg')}: it belongs to another user (uid ${NOBODY})`,
    );
  });
});

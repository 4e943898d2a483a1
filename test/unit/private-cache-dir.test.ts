/**
 * idcli's directory in the user's cache (src/private-cache-dir.ts): created 0700, and refused when another user
 * could write it or the directory it sits in, so nothing is loaded from it that someone else could have put there.
 */
import { chmodSync, mkdirSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { privateCacheDir } from '../../src/private-cache-dir.js';
import { tempDir } from '../support/cli.js';

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

  it('refuses a directory others can enter, or one inside a directory others can write', () => {
    const open = join(dir.path, 'open');
    mkdirSync(join(open, 'idcli'), { recursive: true });
    chmodSync(join(open, 'idcli'), 0o755);
    expect(privateCacheDir({ XDG_CACHE_HOME: open })).toBeUndefined();
    const shared = join(dir.path, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    expect(privateCacheDir({ XDG_CACHE_HOME: shared })).toBeUndefined();
  });

  it('refuses a symbolic link where the directory goes', () => {
    const base = join(dir.path, 'base');
    mkdirSync(join(dir.path, 'elsewhere'), { mode: 0o700 });
    mkdirSync(base, { mode: 0o700 });
    symlinkSync(join(dir.path, 'elsewhere'), join(base, 'idcli'));
    expect(privateCacheDir({ XDG_CACHE_HOME: base })).toBeUndefined();
  });
});

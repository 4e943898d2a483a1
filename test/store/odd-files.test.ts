/**
 * Something other than a regular file where the refresh lock or the file store's record goes (a dangling symbolic
 * link, a directory, a FIFO) is exit 2, found before any browser opens or any request is sent: a refresh token or
 * an authorization code spent into a save that must fail would lose the sign-in. Each command runs in process.
 */
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/file-store.js';
import { lockPathFor } from '../../src/store/lock.js';
import type { CliResult } from '../support/cli.js';
import { describeEachStore, type Harness, harness, login, storeLogin, type StoreKind } from '../support/harness.js';

const ODD_THINGS = {
  'a dangling symbolic link': (path: string) => symlink(join(dirname(path), 'nowhere', 'gone'), path),
  'a directory': (path: string) => mkdir(path),
  'a FIFO': async (path: string) => void execFileSync('mkfifo', ['-m', '600', path]),
};

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Signed in, with an access token that has expired, so the next `token` must refresh. */
async function signedInAndExpired(store: StoreKind): Promise<Harness> {
  // No records: nothing here lists them, and the emulator would make a thousand for each test.
  h = await harness({ store, recordItems: 0 });
  await storeLogin(h, { ttlSec: -1 });
  return h;
}

/** Puts `thing` at `path` (whatever was there goes). */
async function plant(path: string, thing: keyof typeof ODD_THINGS): Promise<void> {
  await rm(path, { force: true });
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await ODD_THINGS[thing](path);
}

/** Nothing reached the service after the first sign-in: no authorize request (no browser), no token request. */
function expectNothingSent(h: Harness, before: number): void {
  expect(h.emu.requests.slice(before).map((r) => r.path)).toEqual([]);
}

function expectOneError(r: CliResult, pattern: RegExp): void {
  expect(r.signal).toBeNull();
  expect(r.code, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).not.toContain('Opening the browser');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
}

// Each command runs in process; the test's own timeout (60 s) is what a run waiting on the odd lock would fail on.
describeEachStore('something other than a regular file at the lock path', (store) => {
  describe.each(Object.keys(ODD_THINGS) as (keyof typeof ODD_THINGS)[])('%s', (thing) => {
    it('`token` needing a refresh: exit 2 before the refresh is sent; the sign-in works once it is removed', async () => {
      const h = await signedInAndExpired(store);
      const lock = lockPathFor(join(h.dir, 'config'), h.key());
      await plant(lock, thing);
      const before = h.emu.requests.length;
      const r = await h.command(['token']);
      expectOneError(r, /\.lock is not a regular file, so it cannot serve as a lock; remove it/);
      expectNothingSent(h, before);
      await rm(lock, { recursive: true, force: true });
      const again = await h.command(['token']);
      expect(again.code, again.stderr).toBe(0);
    });

    it('`login`: exit 2 before the browser opens', async () => {
      const h = await signedInAndExpired(store);
      await plant(lockPathFor(join(h.dir, 'config'), h.key()), thing);
      const before = h.emu.requests.length;
      const r = await h.command(['login', '--timeout', '20']);
      expectOneError(r, /\.lock is not a regular file, so it cannot serve as a lock; remove it/);
      expectNothingSent(h, before);
    });
  });
});

describe('something other than a regular file at the record path (file store)', () => {
  const record = (h: Harness) => new FileStore({ configDir: join(h.dir, 'config') }).pathFor(h.key());
  const refusal = {
    'a dangling symbolic link':
      /^error: refusing to follow the symbolic link \S+\.json; remove the link and run `idcli login`$/,
    'a directory': /^error: \S+\.json is not a regular file; remove it and run `idcli login`$/,
    'a FIFO': /^error: \S+\.json is not a regular file; remove it and run `idcli login`$/,
  };

  describe.each(Object.keys(ODD_THINGS) as (keyof typeof ODD_THINGS)[])('%s', (thing) => {
    it('`token` and `status`: exit 2, nothing sent', async () => {
      const h = await signedInAndExpired('file');
      await plant(await record(h), thing);
      const before = h.emu.requests.length;
      expectOneError(await h.command(['token']), refusal[thing]);
      expectOneError(await h.command(['status']), refusal[thing]);
      expectNothingSent(h, before);
    });

    it('`logout`: a directory is refused (exit 2) and left; a link or a FIFO is removed like a record', async () => {
      const h = await signedInAndExpired('file');
      const path = await record(h);
      await plant(path, thing);
      const r = await h.command(['logout']);
      if (thing === 'a directory') {
        expectOneError(r, refusal[thing]);
        expect((await lstat(path)).isDirectory()).toBe(true);
      } else {
        expect(r.code, r.stderr).toBe(0);
        expect(await lstat(path).catch(() => null)).toBeNull();
      }
    });

    it('`login`: exit 2 before the browser opens, so no code is spent into a save that cannot happen', async () => {
      const h = await signedInAndExpired('file');
      await plant(await record(h), thing);
      const before = h.emu.requests.length;
      expectOneError(await h.command(['login', '--timeout', '20']), refusal[thing]);
      expectNothingSent(h, before);
      // Once it is removed, the sign-in goes through and is saved.
      await rm(await record(h), { recursive: true, force: true });
      await login(h, [], {}, 'command');
      expect(await h.record()).not.toBeNull();
    });
  });
});

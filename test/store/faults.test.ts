/**
 * A credential store that cannot take a write, credentials that belong to someone else, and the temp files of a
 * writer killed mid-write, with the CLI in process. What stops only a user other than root (a file mode) is met by
 * the CLI run as that user, in test/e2e/store-faults.test.ts.
 *
 * The tests run as root, whom no file mode stops: what stops root here is a file or directory that belongs to another
 * user, or one made immutable (chattr +i) as on a read-only mount.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { encodeRecord } from '../../src/store/record.js';
import { expectOneErrorLine } from '../support/cli.js';
import { deadPid } from '../support/store.js';
import { configDirOf, credentialsDirOf, eachFaultTest, recordPathOf } from '../support/store-faults.js';
import { describeEachStore, type Harness, login, refreshGrants } from '../support/harness.js';

const { cleanups, newHarness } = eachFaultTest();

/** What a writer killed between its write and its rename leaves: the new record, under its temp name. */
async function orphanTemp(h: Harness, pid: number): Promise<string> {
  const record = await recordPathOf(h);
  const tmp = `${record}.${pid}.0a1b2c3d4e5f.tmp`;
  await mkdir(credentialsDirOf(h), { recursive: true, mode: 0o700 });
  await writeFile(tmp, `${encodeRecord((await h.record())!)}\n`, { mode: 0o600 });
  return tmp;
}

describe('temp files of writers killed mid-write', () => {
  it('the next write removes those of writers that are gone, and leaves a running writer its own (file store)', async () => {
    const h = await newHarness('file');
    await login(h, [], {}, 'command');
    const dead = await orphanTemp(h, await deadPid());
    const live = `${await recordPathOf(h)}.${process.pid}.0f1e2d3c4b5a.tmp`;
    await writeFile(live, '', { mode: 0o600 });
    const r = await h.command(['token', '--refresh']);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(await readFile(await recordPathOf(h), 'utf8')).toContain(r.stdout.trim());
  });

  describeEachStore('logout', (store) => {
    it('removes them with the sign-in', async () => {
      const h = await newHarness(store);
      await login(h, [], {}, 'command');
      const dead = await orphanTemp(h, await deadPid());
      const r = await h.command(['logout']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/Signed out/);
      expect(existsSync(dead)).toBe(false);
    });
  });
});

const run = promisify(execFile);
const AS_ROOT = process.getuid?.() === 0;
/** A user other than root, whose files the CLI must refuse. */
const NOBODY = { uid: 65534, gid: 65534 };

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// The keychain keeps each user's entries apart by itself; only the file store has owners to check.
describe.runIf(AS_ROOT)('credentials that belong to another user (file store)', () => {
  it('a credentials directory of another user is refused with exit 2, saying whose it is', async () => {
    const h = await newHarness('file');
    await login(h, [], {}, 'command');
    await chown(credentialsDirOf(h), NOBODY.uid, NOBODY.gid);
    const r = await h.command(['token']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expectOneErrorLine(
      r,
      new RegExp(
        `refusing to use ${escaped(credentialsDirOf(h))}: it belongs to another user \\(uid 65534\\), not to you \\(uid 0\\); use a config directory of your own`,
      ),
    );
  });

  it('a record of another user is refused, in a directory of ours', async () => {
    const h = await newHarness('file');
    await login(h, [], {}, 'command');
    const record = await recordPathOf(h);
    await chown(record, NOBODY.uid, NOBODY.gid);
    const r = await h.command(['token']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expectOneErrorLine(r, new RegExp(`refusing to use ${escaped(record)}: it belongs to another user \\(uid 65534\\)`));
  });

  it('a chmod that fails is reported as failed, with the command that fixes it', async () => {
    const h = await newHarness('file');
    await login(h, [], {}, 'command');
    const dirs = [configDirOf(h), credentialsDirOf(h)];
    await writeFile(join(configDirOf(h), 'config.json'), '{"profiles":{}}');
    // Immutable: even root's chmod fails (EPERM), as it does on a read-only mount.
    for (const dir of dirs) {
      await chmod(dir, 0o755);
      await run('chattr', ['+i', dir]);
      cleanups.push(() => run('chattr', ['-i', dir]).then(() => {}));
    }
    const r = await h.command(['token']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\S+\n$/);
    for (const dir of dirs) {
      expect(r.stderr).toContain(
        `warning: ${dir} is accessible by other users (mode 0755) and could not be tightened (EPERM); run: chmod 700 '${dir}'`,
      );
    }
    expect(r.stderr).not.toMatch(/tightened to/);
  });
});

describe.runIf(AS_ROOT)('a store that cannot save', () => {
  describeEachStore('a lock directory that may not be changed at all', (store) => {
    it('a refresh is exit 2 with the path, the reason and the fix, nothing sent, and works once mended', async () => {
      const h = await newHarness(store);
      await login(h, [], {}, 'command');
      const locks = join(configDirOf(h), 'locks');
      await mkdir(locks, { recursive: true, mode: 0o700 });
      // Immutable: even root may not create the lock file in it (EPERM), whichever store holds the sign-in.
      await run('chattr', ['+i', locks]);
      cleanups.push(() => run('chattr', ['-i', locks]).then(() => {}));
      const sent = refreshGrants(h).length;
      const r = await h.command(['token', '--refresh']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expectOneErrorLine(
        r,
        new RegExp(
          `cannot write ${escaped(locks)}/[0-9a-f]+\\.lock: operation not permitted \\(EPERM\\); make ${escaped(locks)} writable for you \\(chmod u\\+rwx '${escaped(locks)}'\\), or set IDCLI_CONFIG_DIR to another directory$`,
        ),
      );
      expect(refreshGrants(h)).toHaveLength(sent);
      await run('chattr', ['-i', locks]);
      const again = await h.command(['token', '--refresh']);
      expect(again.code, again.stderr).toBe(0);
      expect(refreshGrants(h)).toHaveLength(sent + 1);
    });
  });
});

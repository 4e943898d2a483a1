/**
 * Needs a process: a store that stops only a user other than root is met by the built CLI run as that user
 * (`nobody`), and a keyring of the test's own is reached only by a process given its Secret Service's address.
 * A credential store that cannot take a write, and credentials that belong to someone else, met by such runs; what
 * stops root too, and the temp files of a writer killed mid-write, are tested in process (test/store/faults.test.ts).
 *
 * The tests run as root, whom no file mode stops, so a directory that is not writable is made for the user it
 * stops: the CLI runs as `nobody`, in a config directory handed over to it. A keychain that cannot take a write is
 * a locked keyring, on a Secret Service of the test's own so the rest of the suite keeps its keyring.
 *
 * The sign-in a test starts from is set-up, made in this process; on the test's own Secret Service it is made by the
 * built CLI, which is given that service's address.
 */
import { execFile } from 'node:child_process';
import { chmod, chown, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { type CliResult, expectOneErrorLine } from '../support/cli.js';
import {
  authorizeQueries,
  describeEachStore,
  type Harness,
  login,
  type StoreKind,
  refreshGrants,
} from '../support/harness.js';
import { configDirOf, credentialsDirOf, eachFaultTest, recordPathOf } from '../support/store-faults.js';
import { startPrivateKeyring } from '../support/private-keyring.js';

const { cleanups, newHarness } = eachFaultTest();

const run = promisify(execFile);
const AS_ROOT = process.getuid?.() === 0;
/** A user without a home or a keyring: the one the CLI runs as where a file mode must stop it. */
const NOBODY = { uid: 65534, gid: 65534 };

/** The config directory becomes `owner`'s, reachable through the test's own (root's) directory. */
async function handOver(h: Harness, owner: { uid: number; gid: number }): Promise<void> {
  await chmod(h.dir, 0o711);
  await run('chown', ['-R', `${owner.uid}:${owner.gid}`, configDirOf(h)]);
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// The keychain keeps each user's entries apart by itself; only the file store has owners to check.
describe.runIf(AS_ROOT)('credentials that belong to another user (file store)', () => {
  it("root's 0755 directory and 0644 record: a user is refused, and nothing claims a chmod it could not make", async () => {
    const h = await newHarness('file');
    await login(h, [], {}, 'command');
    await handOver(h, NOBODY);
    const dir = credentialsDirOf(h);
    const record = await recordPathOf(h);
    await chown(dir, 0, 0);
    await chown(record, 0, 0);
    await chmod(dir, 0o755);
    await chmod(record, 0o644);
    const r = await h.run(['token'], {}, NOBODY);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expectOneErrorLine(r, /belongs to another user \(uid 0\), not to you \(uid 65534\)/);
    expect(r.stderr).not.toMatch(/tightened/);
    expect((await stat(dir)).mode & 0o777).toBe(0o755);
    expect((await stat(record)).mode & 0o777).toBe(0o644);
  });

  it("another user's record at 0600, which cannot even be opened, is refused naming its owner (exit 2)", async () => {
    // The CLI runs as nobody, in a config directory of its own; the record in it is root's and private. Root
    // would read it regardless of its mode, so only a run as another user meets EACCES, as a real user would.
    const h = await newHarness('file');
    await login(h, [], {}, 'command');
    await handOver(h, NOBODY);
    const record = await recordPathOf(h);
    await chown(record, 0, 0);
    await chmod(record, 0o600);
    for (const command of [['token'], ['status'], ['token', '--refresh']]) {
      const r = await h.run(command, {}, NOBODY);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expectOneErrorLine(
        r,
        new RegExp(
          `refusing to use ${escaped(record)}: it belongs to another user \\(uid 0\\), not to you \\(uid 65534\\)`,
        ),
      );
    }
    expect(h.emu.tokenEvents.filter((e) => e.grant === 'refresh_token')).toHaveLength(0);
  });

  it('a record of our own that we may not read (mode 0200) is exit 2 with the chmod that mends it', async () => {
    const h = await newHarness('file');
    await login(h, [], {}, 'command');
    await handOver(h, NOBODY);
    const record = await recordPathOf(h);
    await chmod(record, 0o200);
    const r = await h.run(['token'], {}, NOBODY);
    expect(r.code, r.stderr).toBe(2);
    expectOneErrorLine(
      r,
      new RegExp(
        `cannot read ${escaped(record)}: permission denied \\(EACCES\\); make ${escaped(record)} readable for you \\(chmod u\\+rw '${escaped(record)}'\\), or remove it and run \`idcli login\``,
      ),
    );
    await chmod(record, 0o600);
    const mended = await h.run(['token'], {}, NOBODY);
    expect(mended.code, mended.stderr).toBe(0);
  });
});

/** A signed-in CLI whose store can be made unable to write, and mended again. */
interface Breakable {
  h: Harness;
  run(args: string[]): Promise<CliResult>;
  break(): Promise<void>;
  mend(): Promise<void>;
  /** What the error must say: the store, and the fix. */
  says: RegExp;
}

async function breakable(store: StoreKind): Promise<Breakable> {
  const h = await newHarness(store);
  if (store === 'file') {
    await login(h, [], {}, 'command');
    await handOver(h, NOBODY);
    const dir = credentialsDirOf(h);
    const record = await recordPathOf(h);
    return {
      h,
      run: (args) => h.run(args, {}, NOBODY),
      break: () => chmod(dir, 0o500),
      mend: () => chmod(dir, 0o700),
      says: new RegExp(
        `cannot write ${escaped(record)}: permission denied \\(EACCES\\); make ${escaped(dir)} writable for you \\(chmod u\\+rwx '${escaped(dir)}'\\), or set IDCLI_CONFIG_DIR to another directory$`,
      ),
    };
  }
  const keyring = await startPrivateKeyring(join(h.dir, 'keyring'));
  cleanups.push(() => keyring.close());
  // A process: the keychain library in this process is bound to the suite's own bus, not the private keyring's.
  await login(h, [], keyring.env, 'run');
  return {
    h,
    run: (args) => h.run(args, keyring.env),
    break: () => keyring.lock(),
    mend: () => keyring.unlock(),
    says: /the keyring is locked \(unlock it/,
  };
}

describe.runIf(AS_ROOT)('a store that cannot save', () => {
  describeEachStore('a refresh', (store) => {
    it('is never sent: exit 2 with the store and the fix, and the sign-in works once the store is mended', async () => {
      const b = await breakable(store);
      const sent = refreshGrants(b.h).length;
      await b.break();
      const r = await b.run(['token', '--refresh']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expectOneErrorLine(r, b.says);
      expect(refreshGrants(b.h)).toHaveLength(sent);

      await b.mend();
      const again = await b.run(['token', '--refresh']);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toMatch(/^\S+\n$/);
      expect(refreshGrants(b.h)).toHaveLength(sent + 1);
      expect(refreshGrants(b.h).every((e) => e.ok && !e.reuse)).toBe(true);
    });
  });

  describeEachStore('login', (store) => {
    it('stops before the browser opens, and the stored sign-in is kept', async () => {
      const b = await breakable(store);
      const opened = authorizeQueries(b.h.emu).length;
      await b.break();
      const r = await b.run(['login', '--timeout', '30']);
      expect(r.code, r.stderr).toBe(2);
      expectOneErrorLine(r, b.says);
      expect(authorizeQueries(b.h.emu)).toHaveLength(opened);

      await b.mend();
      const token = await b.run(['token']);
      expect(token.code, token.stderr).toBe(0);
      expect(token.stdout).toMatch(/^\S+\n$/);
    });
  });

  it('a lock directory that cannot be written: exit 2 with the fix, nothing sent (file store)', async () => {
    const h = await newHarness('file');
    await login(h, [], {}, 'command');
    await handOver(h, NOBODY);
    const locks = join(configDirOf(h), 'locks');
    const sent = refreshGrants(h).length;
    await chmod(locks, 0o500);
    const r = await h.run(['token', '--refresh'], {}, NOBODY);
    expect(r.code, r.stderr).toBe(2);
    expectOneErrorLine(
      r,
      new RegExp(
        `cannot write ${escaped(locks)}/[0-9a-f]+\\.lock: permission denied \\(EACCES\\); make ${escaped(locks)} writable for you \\(chmod u\\+rwx '${escaped(locks)}'\\), or set IDCLI_CONFIG_DIR to another directory$`,
      ),
    );
    expect(refreshGrants(h)).toHaveLength(sent);
    await chmod(locks, 0o700);
    expect((await h.run(['token', '--refresh'], {}, NOBODY)).code).toBe(0);
  });
});

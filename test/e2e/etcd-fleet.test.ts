/**
 * Needs a process: concurrency across processes is the point (40 machines refreshing at once take turns on the
 * lock), and for `exec`, whose child inherits the process's stdout; the rest run idcli in this process. A fleet of
 * machines sharing one sign-in through a real three-member etcd cluster (IDCLI_CREDENTIAL_STORE=etcd), each with its
 * own HOME and config directory, each test on its own prefix of the cluster so that the tests run at once; the
 * emulator's refresh-token reuse detection is the judge: a refresh token sent twice revokes the chain (the fleet is
 * in test/support/etcd-fleet.ts). A cluster that loses members and a lock holder that dies are in etcd-fleet-members and
 * etcd-fleet-holders, so that the forks run their waits side by side.
 */
import { describe, expect, it } from 'vitest';
import type { CliResult } from '../support/cli.js';
import { clusterForFile, expectFleetRefreshed, fleet, harnessFor, WAITING_FOR_LOCK } from '../support/etcd-fleet.js';
import { expectNoSecrets, type Harness, login, refreshGrants } from '../support/harness.js';

const cluster = clusterForFile();

/**
 * Runs `args` in this process with --verbose, stopping it the moment it says it waits for the lock: a run that must
 * not wait fails its test at once instead of after the wait limit.
 */
async function neverWaiting(h: Harness, args: string[], env: Record<string, string>): Promise<CliResult> {
  const stop = new AbortController();
  return h.command([...args, '--verbose'], env, {
    interrupt: stop.signal,
    onStderr: (text) => {
      if (text.includes(WAITING_FOR_LOCK)) stop.abort();
    },
  });
}

describe.concurrent('a sign-in shared through etcd', () => {
  it('40 machines running `token --refresh` at once take turns: no refresh token sent twice', async (t) => {
    const h = await harnessFor(t);
    const f = fleet(h, cluster());
    await f.signIn();
    const before = (await f.record())?.accessToken;
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => h.run(['token', '--refresh'], f.machine(i), { timeoutMs: 120_000 })),
    );
    await expectFleetRefreshed(h, f, results, before);
  }, 180_000);

  it('is made on one machine and served on another, from one linearizable read', async (t) => {
    const h = await harnessFor(t);
    const f = fleet(h, cluster());
    await login(h, [], f.machine(0), 'command');
    const stored = await f.record();
    expect(stored?.accessToken).toBeDefined();

    const other = await h.command(['token'], f.machine(1));
    expect(other.code, other.stderr).toBe(0);
    expect(other.stdout).toBe(`${stored?.accessToken}\n`);
    expect(refreshGrants(h)).toHaveLength(0);

    const status = await h.command(['status', '--json'], f.machine(2));
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as { signedIn: boolean; store: string; storeKind: string };
    expect(report).toMatchObject({ signedIn: true, storeKind: 'etcd' });
    expect(report.store).toContain(cluster().members[0]!.clientUrl);

    // A refresh on a third machine is seen by the first.
    const refreshed = await h.command(['token', '--refresh'], f.machine(3));
    expect(refreshed.code, refreshed.stderr).toBe(0);
    const first = await h.command(['token'], f.machine(0));
    expect(first.stdout).toBe(refreshed.stdout);
    expect(refreshed.stdout).not.toBe(other.stdout);

    const out = await h.command(['logout'], f.machine(4));
    expect(out.code, out.stderr).toBe(0);
    const after = await h.command(['token'], f.machine(1));
    expect(after.code).toBe(3);
    expect(await f.record()).toBeNull();
    expectNoSecrets(h, [other.stdout.trim(), refreshed.stdout.trim()]);
  }, 120_000);

  it('api, list, credential and exec on another machine use the sign-in stored in etcd', async (t) => {
    const h = await harnessFor(t);
    const f = fleet(h, cluster());
    await f.signIn();
    const stored = (await f.record())!;
    const m = f.machine(1);

    const api = await h.command(['api', '/v1/users?pageSize=2'], m);
    expect(api.code, api.stderr).toBe(0);
    expect(JSON.parse(api.stdout)).toHaveProperty('items');
    const list = await h.command(['list', '/v1/users', '--limit', '3'], m);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.trim().split('\n')).toHaveLength(3);

    const kube = await h.command(['credential', 'kubectl'], m);
    expect(kube.code, kube.stderr).toBe(0);
    expect((JSON.parse(kube.stdout) as { status: { token: string } }).status.token).toBe(stored.idToken);
    const host = new URL(h.emu.baseUrl).host;
    const git = await h.command(['credential', 'git', 'get'], m, { stdin: `protocol=http\nhost=${host}\n\n` });
    expect(git.code, git.stderr).toBe(0);
    expect(git.stdout).toContain(`password=${stored.accessToken}\n`);
    // A process: exec's child writes to the stdout it inherits, which only a process of its own gives the test.
    const exec = await h.run(['exec', '--', 'sh', '-c', 'printf %s "$IDCLI_ACCESS_TOKEN"'], m);
    expect(exec.code, exec.stderr).toBe(0);
    expect(exec.stdout).toBe(stored.accessToken);

    // git's erase makes the next use refresh, for the whole fleet.
    const erase = await h.command(['credential', 'git', 'erase'], m, {
      stdin: `protocol=http\nhost=${host}\npassword=${stored.accessToken}\n\n`,
    });
    expect(erase.code, erase.stderr).toBe(0);
    const next = await h.command(['token'], f.machine(2));
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).not.toBe(`${stored.accessToken}\n`);
    expect(refreshGrants(h)).toHaveLength(1);
    for (const r of [api, list, kube, git, exec, erase, next]) expect(r.stderr).not.toContain(stored.accessToken!);
  }, 120_000);

  it('`token --refresh` refreshes even when the record was written by a machine whose clock runs ahead', async (t) => {
    const h = await harnessFor(t);
    const f = fleet(h, cluster());
    await f.signIn();
    const stored = (await f.record())!;
    // The machine that wrote it believes it is an hour later than this one does.
    const s = f.store();
    try {
      await s.write(h.key(), { ...stored, updatedAt: Date.now() + 3_600_000, generation: stored.generation + 1 });
    } finally {
      s.close();
    }
    const r = await h.command(['token', '--refresh'], f.machine(1));
    expect(r.code, r.stderr).toBe(0);
    expect(refreshGrants(h)).toHaveLength(1);
    expect(r.stdout).not.toBe(`${stored.accessToken}\n`);
    expect(r.stdout).toBe(`${(await f.record())?.accessToken}\n`);
  }, 60_000);

  it('a refresh stored while this machine waited is taken, whatever the clock of the machine that stored it', async (t) => {
    const h = await harnessFor(t);
    const f = fleet(h, cluster());
    await f.signIn();
    const s = f.store();
    let waiting: Promise<CliResult> | undefined;
    try {
      // Another machine holds the lock and stores a record stamped an hour before this machine's clock.
      await s.withLock(
        h.key(),
        async () => {
          let atLock!: () => void;
          const waiterAtLock = new Promise<void>((resolve) => (atLock = resolve));
          waiting = h.command(['token', '--refresh', '--verbose'], f.machine(1), {
            onStderr: (text) => {
              if (text.includes(WAITING_FOR_LOCK)) atLock();
            },
          });
          // The waiter has read the record and found the lock taken: it is at the lock.
          const first = await Promise.race([waiterAtLock.then(() => undefined), waiting]);
          if (first) throw new Error(`the waiter ended without waiting for the lock: ${first.stderr}`);
          const current = (await s.read(h.key()))!;
          await s.write(h.key(), {
            ...current,
            updatedAt: Date.now() - 3_600_000,
            generation: current.generation + 1,
          });
        },
        {},
      );
    } finally {
      s.close();
    }
    const r = await waiting!;
    expect(r.code, r.stderr).toBe(0);
    expect(refreshGrants(h)).toHaveLength(0);
    expect(r.stdout).toBe(`${(await f.record())?.accessToken}\n`);
  }, 60_000);

  it('a lock key planted without a lease is taken over at once', async (t) => {
    const h = await harnessFor(t);
    const f = fleet(h, cluster());
    await f.signIn();
    const lockKey = f.lockKey();
    cluster().ctl(['put', lockKey, 'x']);
    // At once: the run never waits for the lock.
    const r = await neverWaiting(h, ['token', '--refresh'], f.machine(1));
    expect(r.stderr).not.toContain(WAITING_FOR_LOCK);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${(await f.record())?.accessToken}\n`);
    // Taken with this run's lease, it went with it.
    expect(cluster().ctl(['get', lockKey])).toBe('');
  }, 60_000);

  it('a lock key on a lease longer than idcli grants: exit 4 at once, naming the key to delete', async (t) => {
    const h = await harnessFor(t);
    const f = fleet(h, cluster());
    await f.signIn();
    const lockKey = f.lockKey();
    const lease = /lease ([0-9a-f]+) granted/.exec(cluster().ctl(['lease', 'grant', '3600']))![1]!;
    try {
      cluster().ctl(['put', `--lease=${lease}`, lockKey, 'x']);
      const r = await neverWaiting(h, ['token', '--refresh'], f.machine(1));
      expect(r.stderr).not.toContain(WAITING_FOR_LOCK);
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toContain(`the etcd lock ${lockKey} is held on a lease of 3600 s`);
      expect(r.stderr).toContain(`etcdctl del '${lockKey}'`);
      expect(r.stderr).not.toContain('a holder that died');
      expect(refreshGrants(h)).toHaveLength(0);
    } finally {
      cluster().ctl(['lease', 'revoke', lease]);
    }
  }, 60_000);
});

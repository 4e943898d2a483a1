/**
 * A fleet of machines sharing one sign-in through a real three-member etcd cluster (IDCLI_CREDENTIAL_STORE=etcd).
 * Each machine is a process with its own HOME and config directory; the emulator's refresh-token reuse detection
 * is the judge: a refresh token sent twice revokes the chain (the fleet is in ./etcd-fleet.ts). A cluster that loses
 * members and a lock holder that dies are in etcd-fleet-members and etcd-fleet-holders, so that the forks run their
 * waits side by side.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../support/cli.js';
import { type EtcdCluster, startEtcdCluster } from '../support/etcd-cluster.js';
import { until } from '../support/until.js';
import { expectFleetRefreshed, fleet } from './etcd-fleet.js';
import { expectNoSecrets, type Harness, harness, login, refreshGrants } from './harness.js';

let cluster: EtcdCluster | undefined;
let h: Harness | undefined;

beforeAll(async () => {
  cluster = await startEtcdCluster();
}, 60_000);
afterAll(async () => {
  await cluster?.close();
});
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('a sign-in shared through etcd', () => {
  it('is made on one machine and served on another, from one linearizable read', async () => {
    h = await harness();
    const f = fleet(h, cluster!);
    await login(h, [], f.machine(0));
    const stored = await f.record();
    expect(stored?.accessToken).toBeDefined();

    const other = await h.run(['token'], f.machine(1));
    expect(other.code, other.stderr).toBe(0);
    expect(other.stdout).toBe(`${stored?.accessToken}\n`);
    expect(refreshGrants(h)).toHaveLength(0);

    const status = await h.run(['status', '--json'], f.machine(2));
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as { signedIn: boolean; store: string; storeKind: string };
    expect(report).toMatchObject({ signedIn: true, storeKind: 'etcd' });
    expect(report.store).toContain(cluster!.members[0]!.clientUrl);

    // A refresh on a third machine is seen by the first.
    const refreshed = await h.run(['token', '--refresh'], f.machine(3));
    expect(refreshed.code, refreshed.stderr).toBe(0);
    const first = await h.run(['token'], f.machine(0));
    expect(first.stdout).toBe(refreshed.stdout);
    expect(refreshed.stdout).not.toBe(other.stdout);

    const out = await h.run(['logout'], f.machine(4));
    expect(out.code, out.stderr).toBe(0);
    const after = await h.run(['token'], f.machine(1));
    expect(after.code).toBe(3);
    expect(await f.record()).toBeNull();
    expectNoSecrets(h, [other.stdout.trim(), refreshed.stdout.trim()]);
  }, 120_000);

  it('api, list, credential and exec on another machine use the sign-in stored in etcd', async () => {
    h = await harness();
    const f = fleet(h, cluster!);
    await login(h, [], f.machine(0));
    const stored = (await f.record())!;
    const m = f.machine(1);

    const api = await h.run(['api', '/v1/users?pageSize=2'], m);
    expect(api.code, api.stderr).toBe(0);
    expect(JSON.parse(api.stdout)).toHaveProperty('items');
    const list = await h.run(['list', '/v1/users', '--limit', '3'], m);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.trim().split('\n')).toHaveLength(3);

    const kube = await h.run(['credential', 'kubectl'], m);
    expect(kube.code, kube.stderr).toBe(0);
    expect((JSON.parse(kube.stdout) as { status: { token: string } }).status.token).toBe(stored.idToken);
    const host = new URL(h.emu.baseUrl).host;
    const git = await h.run(['credential', 'git', 'get'], m, { input: `protocol=http\nhost=${host}\n\n` });
    expect(git.code, git.stderr).toBe(0);
    expect(git.stdout).toContain(`password=${stored.accessToken}\n`);
    const exec = await h.run(['exec', '--', 'sh', '-c', 'printf %s "$IDCLI_ACCESS_TOKEN"'], m);
    expect(exec.code, exec.stderr).toBe(0);
    expect(exec.stdout).toBe(stored.accessToken);

    // git's erase makes the next use refresh, for the whole fleet.
    const erase = await h.run(['credential', 'git', 'erase'], m, {
      input: `protocol=http\nhost=${host}\npassword=${stored.accessToken}\n\n`,
    });
    expect(erase.code, erase.stderr).toBe(0);
    const next = await h.run(['token'], f.machine(2));
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).not.toBe(`${stored.accessToken}\n`);
    expect(refreshGrants(h)).toHaveLength(1);
    for (const r of [api, list, kube, git, exec, erase, next]) expect(r.stderr).not.toContain(stored.accessToken!);
  }, 120_000);

  it('`token --refresh` refreshes even when the record was written by a machine whose clock runs ahead', async () => {
    h = await harness();
    const f = fleet(h, cluster!);
    await login(h, [], f.machine(0));
    const stored = (await f.record())!;
    // The machine that wrote it believes it is an hour later than this one does.
    const s = f.store();
    try {
      await s.write(h.key(), { ...stored, updatedAt: Date.now() + 3_600_000, generation: stored.generation + 1 });
    } finally {
      s.close();
    }
    const r = await h.run(['token', '--refresh'], f.machine(1));
    expect(r.code, r.stderr).toBe(0);
    expect(refreshGrants(h)).toHaveLength(1);
    expect(r.stdout).not.toBe(`${stored.accessToken}\n`);
    expect(r.stdout).toBe(`${(await f.record())?.accessToken}\n`);
  }, 60_000);

  it('a refresh stored while this machine waited is taken, whatever the clock of the machine that stored it', async () => {
    h = await harness();
    const f = fleet(h, cluster!);
    await login(h, [], f.machine(0));
    const leases = () =>
      cluster!
        .ctl(['lease', 'list'])
        .split('\n')
        .filter((l) => /^[0-9a-f]+$/.test(l.trim()));
    const s = f.store();
    let waiting: Promise<CliResult> | undefined;
    try {
      // Another machine holds the lock and stores a record stamped an hour before this machine's clock.
      await s.withLock(
        h.key(),
        async () => {
          const held = leases().length;
          waiting = h!.run(['token', '--refresh', '--verbose'], f.machine(1), { timeoutMs: 60_000 });
          // The waiter has read the record and asked for its own lease: it is at the lock.
          await until(() => (leases().length > held ? true : undefined), 30_000, 'the waiter at the lock');
          const current = (await s.read(h!.key()))!;
          await s.write(h!.key(), {
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

  it('40 machines running `token --refresh` at once take turns: no refresh token sent twice', async () => {
    h = await harness();
    const f = fleet(h, cluster!);
    await login(h, [], f.machine(0));
    const before = (await f.record())?.accessToken;
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => h!.run(['token', '--refresh'], f.machine(i), { timeoutMs: 120_000 })),
    );
    await expectFleetRefreshed(h, f, results, before);
  }, 180_000);

  it('quorum lost while the refresh is at the service: exit 4 saying the refresh was made but not stored', async () => {
    const c = await startEtcdCluster();
    try {
      h = await harness();
      const f = fleet(h, c);
      await login(h, [], f.machine(0));
      // The service answers late; two members die while the refresh is with it, so its answer finds no quorum.
      h.emu.inject({ path: '/oauth/token', fault: { kind: 'latency', ms: 2_000 } });
      let killing: Promise<void> | undefined;
      h.emu.onRequest((r) => {
        if (r.path === '/oauth/token' && !killing) killing = c.kill(0).then(() => c.kill(1));
      });
      const r = await h.run(['token', '--refresh'], f.machine(1), { timeoutMs: 120_000 });
      h.emu.onRequest(undefined);
      await killing;
      expect(refreshGrants(h).filter((e) => e.ok)).toHaveLength(1);
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toContain('the refresh was made but its answer could not be stored in etcd');
      expect(r.stderr).toContain('`idcli login`');
      expect(r.stderr).not.toContain('no refresh was sent');
      // Exit 4 prints nothing on stdout: a token the fleet's record does not hold is not handed out.
      expect(r.stdout).toBe('');
      expectNoSecrets(h, []);
    } finally {
      await c.close();
    }
  }, 180_000);

  it('a lock key planted without a lease is taken over at once', async () => {
    h = await harness();
    const f = fleet(h, cluster!);
    await login(h, [], f.machine(0));
    const s = f.store();
    const lockKey = s.lockKey(h.key());
    s.close();
    cluster!.ctl(['put', lockKey, 'x']);
    const started = Date.now();
    const r = await h.run(['token', '--refresh'], f.machine(1), { timeoutMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r.stdout).toBe(`${(await f.record())?.accessToken}\n`);
    // Taken with this run's lease, it went with it.
    expect(cluster!.ctl(['get', lockKey])).toBe('');
  }, 60_000);

  it('a lock key on a lease longer than idcli grants: exit 4 at once, naming the key to delete', async () => {
    h = await harness();
    const f = fleet(h, cluster!);
    await login(h, [], f.machine(0));
    const s = f.store();
    const lockKey = s.lockKey(h.key());
    s.close();
    const lease = /lease ([0-9a-f]+) granted/.exec(cluster!.ctl(['lease', 'grant', '3600']))![1]!;
    try {
      cluster!.ctl(['put', `--lease=${lease}`, lockKey, 'x']);
      const started = Date.now();
      const r = await h.run(['token', '--refresh'], f.machine(1), { timeoutMs: 120_000 });
      expect(r.code, r.stderr).toBe(4);
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(r.stderr).toContain(`the etcd lock ${lockKey} is held on a lease of 3600 s`);
      expect(r.stderr).toContain(`etcdctl del '${lockKey}'`);
      expect(r.stderr).not.toContain('a holder that died');
      expect(refreshGrants(h)).toHaveLength(0);
    } finally {
      cluster!.ctl(['lease', 'revoke', lease]);
    }
  }, 60_000);
});

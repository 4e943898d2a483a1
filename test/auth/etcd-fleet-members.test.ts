/**
 * A fleet sharing one sign-in through etcd (./etcd-fleet.ts) whose cluster loses members: each test kills members of
 * a cluster of its own, with its own emulator, so the two run at the same time.
 */
import { describe, expect, it, type TestContext } from 'vitest';
import { startEtcdCluster } from '../support/etcd-cluster.js';
import { until } from '../support/until.js';
import { expectFleetRefreshed, fleet } from './etcd-fleet.js';
import { type Harness, harness, login, refreshGrants, tokenForms } from './harness.js';

/** A harness for the calling test, closed once it has finished. */
async function harnessFor({ onTestFinished }: TestContext): Promise<Harness> {
  const h = await harness();
  onTestFinished(() => h.close());
  return h;
}

describe.concurrent('a sign-in shared through etcd', () => {
  it('a member killed in the middle of a burst is not seen by the fleet', async (t) => {
    const c = await startEtcdCluster();
    try {
      const h = await harnessFor(t);
      const f = fleet(h, c);
      await login(h, [], f.machine(0));
      const before = (await f.record())?.accessToken;
      const runs = Array.from({ length: 12 }, (_, i) =>
        h.run(['token', '--refresh'], f.machine(i), { timeoutMs: 120_000 }),
      );
      // Killed once the burst is under way: the first refresh request has reached the service.
      await until(() => (refreshGrants(h).length > 0 ? true : undefined), 60_000, 'the first refresh');
      await c.kill(0);
      await expectFleetRefreshed(h, f, await Promise.all(runs), before, c.members.slice(1));
    } finally {
      await c.close();
    }
  }, 180_000);

  it('without a quorum: exit 4 naming the members, and no refresh is sent', async (t) => {
    const c = await startEtcdCluster();
    try {
      const h = await harnessFor(t);
      const f = fleet(h, c);
      await login(h, [], f.machine(0));
      await c.kill(0);
      await c.kill(1);
      const results = await Promise.all(
        [1, 2, 3].map((i) => h.run(['token', '--refresh'], f.machine(i), { timeoutMs: 120_000 })),
      );
      for (const r of results) {
        expect(r.code, r.stderr).toBe(4);
        expect(r.stderr).toContain('no etcd member answered with a quorum');
        for (const m of c.members) expect(r.stderr).toContain(m.clientUrl);
        expect(r.stderr).not.toMatch(/^\s+at /m); // one line, no stack
      }
      expect(tokenForms(h.emu).filter((x) => x.grant_type === 'refresh_token')).toHaveLength(0);
    } finally {
      await c.close();
    }
  }, 180_000);
});

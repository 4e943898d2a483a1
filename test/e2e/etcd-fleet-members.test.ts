/**
 * Needs a process: concurrency across processes is the point, a burst of machines refreshing at once while a member
 * is killed. A fleet sharing one sign-in through etcd (test/support/etcd-fleet.ts) whose cluster loses members: each test kills
 * members of a cluster of its own, with its own emulator, so the tests run at the same time; sign-ins, the runs
 * without a quorum and the refresh whose answer finds no quorum run in this process.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../support/clock.js';
import { startEtcdCluster } from '../support/etcd-cluster.js';
import { until } from '../support/until.js';
import { expectFleetRefreshed, fleet, harnessFor } from '../support/etcd-fleet.js';
import { expectNoSecrets, refreshGrants, tokenForms } from '../support/harness.js';

/** A member's deadline on the run's clock (MEMBER_DEADLINE_MS of src/store/etcd-client.ts). */
const MEMBER_DEADLINE_MS = 5_000;

/**
 * Moves `clock` through the passes of a run whose first member accepts and never answers: a pass starts with that
 * member's deadline, the only timer then, and the pause after it is let end once the other members have failed (the
 * deadlines of their attempts are never let end). Resolves with the delays let end, in order, once the run is over.
 */
async function throughPasses(clock: FakeClock, run: Promise<unknown>): Promise<number[]> {
  let ended = false;
  void run.finally(() => (ended = true)).catch(() => {});
  const fired: number[] = [];
  for (let step = 0; ; step++) {
    const due = step % 2 === 0 ? (ms: number) => ms === MEMBER_DEADLINE_MS : (ms: number) => ms < MEMBER_DEADLINE_MS;
    const next = await until(() => (ended ? 'ended' : clock.pending().find(due)), 20_000, 'the run to ask or pause');
    if (next === 'ended') return fired;
    fired.push(await clock.elapseFirst(due));
  }
}

describe.concurrent('a sign-in shared through etcd', () => {
  it('a member killed in the middle of a burst is not seen by the fleet', async (t) => {
    const c = await startEtcdCluster();
    try {
      const h = await harnessFor(t);
      const f = fleet(h, c);
      await f.signIn();
      const before = (await f.record())?.accessToken;
      const runs = Array.from({ length: 12 }, (_, i) =>
        h.run(['token', '--refresh'], f.machine(i), { timeoutMs: 120_000 }),
      );
      // Killed once the burst is under way: the first refresh request has reached the service.
      await until(() => (refreshGrants(h).length > 0 ? true : undefined), 60_000, 'the first refresh');
      await c.kill(0);
      await expectFleetRefreshed(h, f, await Promise.all(runs), before);
    } finally {
      await c.close();
    }
  }, 180_000);

  it('without a quorum: exit 4 naming the members, and no refresh is sent', async (t) => {
    const c = await startEtcdCluster();
    try {
      const h = await harnessFor(t);
      const f = fleet(h, c);
      await f.signIn();
      // The member left, asked first, accepts and never answers without a quorum; the others are gone.
      await c.kill(1);
      await c.kill(2);
      const results = await Promise.all(
        [1, 2, 3].map(async (i) => {
          const clock = new FakeClock();
          const started = clock.now();
          const run = h.command(['token', '--refresh'], f.machine(i), { clock });
          const fired = await throughPasses(clock, run);
          return { ...(await run), fired, took: clock.now() - started };
        }),
      );
      for (const r of results) {
        expect(r.code, r.stderr).toBe(4);
        expect(r.stderr).toContain('no etcd member answered with a quorum');
        for (const m of c.members) expect(r.stderr).toContain(m.clientUrl);
        expect(r.stderr).not.toMatch(/^\s+at /m); // one line, no stack
        // On the run's clock: two passes, each ended by the live member's 5 s deadline, and the pause between;
        // a third would start past the call's 8 s patience.
        expect(r.fired).toEqual([5_000, 250, 5_000]);
        expect(r.took).toBe(10_250);
      }
      expect(tokenForms(h.emu).filter((x) => x.grant_type === 'refresh_token')).toHaveLength(0);
    } finally {
      await c.close();
    }
  }, 180_000);

  it('quorum lost while the refresh is at the service: exit 4 saying the refresh was made but not stored', async (t) => {
    const c = await startEtcdCluster();
    try {
      const h = await harnessFor(t);
      const f = fleet(h, c);
      await f.signIn();
      // The service answers late; two members die while the refresh is with it, so its answer finds no quorum.
      h.emu.inject({ path: '/oauth/token', fault: { kind: 'latency', ms: 2_000 } });
      let killing: Promise<void> | undefined;
      h.emu.onRequest((r) => {
        if (r.path === '/oauth/token' && !killing) killing = c.kill(0).then(() => c.kill(1));
      });
      const r = await h.command(['token', '--refresh'], f.machine(1));
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
});

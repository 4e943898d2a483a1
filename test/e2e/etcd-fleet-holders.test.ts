/**
 * Needs a process: a killed holder is the point, a lock holder SIGKILLed mid-refresh and the fleet of machines
 * refreshing at once that waits for its lease to lapse. A fleet sharing one sign-in through etcd (test/support/etcd-fleet.ts);
 * sign-ins and single checks run in this process. In a file of its own so that the forks run these waits beside the
 * other etcd tests; the two tests, each with its own emulator and prefix, wait at the same time.
 */
import { describe, expect, it } from 'vitest';
import { createPkcePair } from '../../src/oauth/pkce.js';
import {
  clusterForFile,
  expectFleetRefreshed,
  fleet,
  harnessFor,
  killHolderMidRefresh,
} from '../support/etcd-fleet.js';
import { login, refreshGrants, tokenForms } from '../support/harness.js';

const cluster = clusterForFile();

describe.concurrent('a sign-in shared through etcd', () => {
  it('a holder killed before the service acted on its refresh: the fleet goes on with the chain', async (t) => {
    const h = await harnessFor(t);
    const f = fleet(h, cluster());
    await f.signIn();
    const before = (await f.record())?.accessToken;
    // The holder dies as its request arrives; the service drops it unprocessed: the refresh token is not spent.
    await killHolderMidRefresh(h, f.machine(0));
    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => h.run(['token', '--refresh'], f.machine(i + 1), { timeoutMs: 120_000 })),
    );
    // The dead holder's lease lapses (10 s); one machine finds its in-flight marker, tries once, and it works.
    expect(Date.now() - started).toBeLessThan(30_000);
    await expectFleetRefreshed(h, f, results, before);
  }, 180_000);

  it('a holder killed after the service spent its refresh token: every machine says to sign in again', async (t) => {
    const h = await harnessFor(t);
    const f = fleet(h, cluster());
    await f.signIn();
    const chain = (await f.record())!;
    await killHolderMidRefresh(h, f.machine(0));
    // What the service does when the request got through before the holder died: the refresh token is spent, and
    // its successor died with the holder.
    const next = createPkcePair();
    const form = {
      grant_type: 'refresh_token',
      refresh_token: chain.refreshToken!,
      client_id: h.emu.client.id,
      code_verifier: chain.codeVerifier!,
      code_challenge: next.challenge,
      code_challenge_method: 'S256',
    };
    const spent = await fetch(`${h.emu.baseUrl}/oauth/token`, { method: 'POST', body: new URLSearchParams(form) });
    expect(spent.status, await spent.clone().text()).toBe(200);
    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => h.run(['token', '--refresh'], f.machine(i + 1), { timeoutMs: 120_000 })),
    );
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(new Set(results.map((r) => r.code)), results.map((r) => r.stderr).join('\n')).toEqual(new Set([3]));
    for (const r of results) expect(r.stderr).toContain('the stored sign-in was rejected by the server');
    // One machine tried once; the others learnt the outcome from the store, without a refresh of their own.
    const tries = tokenForms(h.emu).filter((x) => x.grant_type === 'refresh_token');
    expect(tries).toHaveLength(3); // the dead holder's (dropped), the spending one above, and the one retry
    expect(refreshGrants(h).filter((e) => e.reuse)).toHaveLength(1);
    const later = await h.command(['token'], f.machine(9));
    expect(later.code).toBe(3);
    expect(later.stderr).toContain('the stored sign-in was rejected by the server');
    // Signing in again mends it for the whole fleet.
    await login(h, [], f.machine(9), 'command');
    const mended = await h.command(['token', '--refresh'], f.machine(1));
    expect(mended.code, mended.stderr).toBe(0);
  }, 180_000);
});

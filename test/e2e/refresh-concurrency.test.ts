/**
 * Needs a process: the lock serialises runs across processes, so the crowds are real processes of the built CLI.
 * N processes refreshing the same sign-in at once: the lock serialises them, so no refresh token is sent twice.
 * With each credential store: a store that hands out a value read before the lock was taken burns the sign-in.
 * A forced refresh is satisfied by any refresh that completed after it started, so a crowd shares a few. The larger
 * crowds are part processes, part runs in this process (which take the same lock file, each as its own holder), so
 * they cost fewer process starts; the sign-in before and the runs after a crowd are made in process.
 */
import { afterEach, expect, it } from 'vitest';
import {
  describeEachStore,
  expectNoSecrets,
  type Harness,
  harness,
  storeLogin,
  tokenForms,
  refreshGrants,
} from '../support/harness.js';
import { until } from '../support/until.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/**
 * `token --refresh` at once, `processes` times as a process and `inProcess` times in this process: all succeed with
 * at most `most` refreshes between them, no refresh token is sent twice, none is served the token from before it
 * started, and one more refresh works.
 */
async function refreshAtOnce(hh: Harness, processes: number, inProcess: number, most: number): Promise<void> {
  await storeLogin(hh);
  const before = (await hh.record())?.accessToken;
  const args = ['token', '--refresh'];
  const results = await Promise.all([
    ...Array.from({ length: processes }, () => hh.run(args, {}, { timeoutMs: 300_000 })),
    ...Array.from({ length: inProcess }, () => hh.command(args)),
  ]);
  for (const r of results) {
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\S+\n$/);
  }
  const refreshes = refreshGrants(hh);
  expect(refreshes.length).toBeGreaterThanOrEqual(1);
  expect(refreshes.length).toBeLessThanOrEqual(most);
  expect(refreshes.every((e) => e.ok && !e.reuse)).toBe(true);
  const sent = tokenForms(hh.emu)
    .filter((f) => f.grant_type === 'refresh_token')
    .map((f) => f.refresh_token);
  expect(new Set(sent).size).toBe(sent.length); // no refresh token was sent twice
  const printed = results.map((r) => r.stdout.trim());
  expect(printed).not.toContain(before);
  expect(new Set(printed).size).toBeLessThanOrEqual(refreshes.length);
  const rec = await hh.record();
  expect(rec?.generation).toBe(1 + refreshes.length);
  expect(printed).toContain(rec?.accessToken);
  // The family is alive: the next refresh proves the last stored verifier.
  const after = await hh.command(['token', '--refresh']);
  expect(after.code, after.stderr).toBe(0);
  expect(refreshGrants(hh).every((e) => e.ok && !e.reuse)).toBe(true);
  expectNoSecrets(hh, [...printed, after.stdout.trim()]);
}

describeEachStore('concurrent refreshes', (store) => {
  it('8 processes running `token --refresh` at once all succeed, sharing refreshes', async () => {
    h = await harness({ store, recordItems: 0 });
    await refreshAtOnce(h, 8, 0, 3);
  }, 240_000);

  it('16 runs of `token --refresh` at once (4 processes) all succeed, sharing refreshes', async () => {
    h = await harness({ store, recordItems: 0 });
    await refreshAtOnce(h, 4, 12, 3);
  }, 360_000);

  it('50 runs of `token --refresh` at once (10 processes) all succeed with far fewer refreshes', async () => {
    h = await harness({ store, recordItems: 0 });
    await refreshAtOnce(h, 10, 40, 5);
  }, 600_000);

  it('a forced refresh takes the token of a refresh that completed after it started', async () => {
    h = await harness({ store, recordItems: 0 });
    await storeLogin(h);
    // The first run's refresh is slow, so the second starts while it is in flight and waits for the lock.
    h.emu.inject({ path: '/oauth/token', fault: { kind: 'latency', ms: 1500 } });
    // Counted on arrival: the form of a delayed request is read only after the delay.
    const tokenRequests = () => h!.emu.requests.filter((r) => r.path === '/oauth/token').length;
    const loggedIn = tokenRequests();
    const first = h.command(['token', '--refresh']);
    await until(() => (tokenRequests() > loggedIn ? true : undefined), 60_000, 'the first refresh request');
    const second = h.command(['token', '--refresh', '--verbose']);
    const [a, b] = await Promise.all([first, second]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(refreshGrants(h)).toHaveLength(1);
    expect(b.stdout).toBe(a.stdout);
    expect(b.stderr).toContain('another idcli refreshed the token meanwhile; using its token');
  });

  it('a refresh that completed before it started does not count', async () => {
    h = await harness({ store, recordItems: 0 });
    await storeLogin(h);
    const a = await h.command(['token', '--refresh']);
    const b = await h.command(['token', '--refresh']);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(refreshGrants(h)).toHaveLength(2);
    expect(b.stdout).not.toBe(a.stdout);
  });

  it('processes that need a token at once share one refresh', async () => {
    h = await harness({ store, recordItems: 0 });
    // The stored access token has expired: every process starts out needing a refresh.
    await storeLogin(h, { ttlSec: -1 });
    const results = await Promise.all(Array.from({ length: 6 }, () => h!.run(['token'], {}, { timeoutMs: 120_000 })));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    // The first refreshed; the others re-read the record after taking the lock and found its fresh token.
    const refreshes = h.emu.tokenEvents.filter((e) => e.grant === 'refresh_token');
    expect(refreshes).toHaveLength(1);
    expect(refreshes[0]?.ok).toBe(true);
    expect(new Set(results.map((r) => r.stdout)).size).toBe(1);
    expect(results[0]?.stdout.trim()).toBe((await h.record())?.accessToken);
  });
});

/**
 * N processes refreshing the same sign-in at once: the lock serialises them, so no refresh token is sent twice.
 * With each credential store: a store that hands out a value read before the lock was taken burns the sign-in.
 */
import { afterEach, expect, it } from 'vitest';
import { describeEachStore, expectNoSecrets, type Harness, harness, login, tokenForms } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** N `token --refresh` at once: all succeed, the server saw N serial refreshes, no reuse, and one more works. */
async function refreshAtOnce(hh: Harness, n: number): Promise<void> {
  await login(hh);
  const results = await Promise.all(
    Array.from({ length: n }, () => hh.run(['token', '--refresh'], {}, { timeoutMs: 180_000 })),
  );
  for (const r of results) {
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\S+\n$/);
  }
  const refreshes = hh.emu.tokenEvents.filter((e) => e.grant === 'refresh_token');
  expect(refreshes).toHaveLength(n);
  expect(refreshes.every((e) => e.ok && !e.reuse)).toBe(true);
  const sent = tokenForms(hh.emu)
    .filter((f) => f.grant_type === 'refresh_token')
    .map((f) => f.refresh_token);
  expect(new Set(sent).size).toBe(n); // no refresh token was sent twice
  const printed = results.map((r) => r.stdout.trim());
  expect(new Set(printed).size).toBe(n);
  const rec = await hh.record();
  expect(rec?.generation).toBe(1 + n);
  expect(printed).toContain(rec?.accessToken);
  // The family is alive: the next refresh proves the last stored verifier.
  const after = await hh.run(['token', '--refresh']);
  expect(after.code, after.stderr).toBe(0);
  expect(hh.emu.tokenEvents.filter((e) => e.grant === 'refresh_token').every((e) => e.ok && !e.reuse)).toBe(true);
  expectNoSecrets(hh, [...printed, after.stdout.trim()]);
}

describeEachStore('concurrent refreshes', (store) => {
  it('8 processes running `token --refresh` at once all succeed with 8 serial refreshes', async () => {
    h = await harness({ store });
    await refreshAtOnce(h, 8);
  }, 240_000);

  it('16 processes running `token --refresh` at once all succeed with 16 serial refreshes', async () => {
    h = await harness({ store });
    await refreshAtOnce(h, 16);
  }, 360_000);

  it('processes that need a token at once share one refresh', async () => {
    h = await harness({ store });
    await login(h);
    const rec = await h.record();
    // Age the stored access token: every process starts out needing a refresh.
    await h.writeRecord({ ...rec!, expiresAt: Date.now() - 1000, generation: rec!.generation + 1 });
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

/** N processes refreshing the same sign-in at once: the lock serialises them, so no refresh token is sent twice. */
import { afterEach, describe, expect, it } from 'vitest';
import { expectNoSecrets, type Harness, harness, login, tokenForms } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('concurrent refreshes', () => {
  it('8 processes running `token --refresh` at once all succeed with 8 serial refreshes', async () => {
    h = await harness();
    await login(h);
    const N = 8;
    const results = await Promise.all(
      Array.from({ length: N }, () => h!.run(['token', '--refresh'], {}, { timeoutMs: 120_000 })),
    );
    for (const r of results) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^\S+\n$/);
    }
    const refreshes = h.emu.tokenEvents.filter((e) => e.grant === 'refresh_token');
    expect(refreshes).toHaveLength(N);
    expect(refreshes.every((e) => e.ok && !e.reuse)).toBe(true);
    const sent = tokenForms(h.emu)
      .filter((f) => f.grant_type === 'refresh_token')
      .map((f) => f.refresh_token);
    expect(new Set(sent).size).toBe(N); // no refresh token was sent twice
    const printed = results.map((r) => r.stdout.trim());
    expect(new Set(printed).size).toBe(N);
    const rec = await h.record();
    expect(rec?.generation).toBe(1 + N);
    expect(printed).toContain(rec?.accessToken);
    expectNoSecrets(h, printed);
  });

  it('processes that need a token at once share one refresh', async () => {
    h = await harness();
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

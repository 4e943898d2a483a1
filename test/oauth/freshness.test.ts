import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { refreshProof, usable, writtenSince } from '../../src/oauth/freshness.js';
import type { CredentialRecord } from '../../src/store/record.js';
import { thrown } from '../support/thrown.js';

const record = (over: Partial<CredentialRecord> = {}): CredentialRecord => ({
  version: 1,
  accessToken: 'at',
  refreshToken: 'rt',
  codeVerifier: 'v',
  expiresAt: 100_000,
  updatedAt: 1_000,
  generation: 1,
  ...over,
});

describe('usable', () => {
  it('serves a token only while it lives longer than the minimum, to the millisecond', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 0, max: 86_400 }), (now, minTtl) => {
        const edge = now + minTtl * 1000;
        expect(usable(record({ expiresAt: edge }), now, minTtl)).toBe(false);
        expect(usable(record({ expiresAt: edge + 1 }), now, minTtl)).toBe(true);
      }),
    );
  });

  it('never serves a record without an access token or an expiry', () => {
    expect(usable(record({ accessToken: undefined }), 0, 0)).toBe(false);
    expect(usable(record({ expiresAt: undefined }), 0, 0)).toBe(false);
  });
});

describe('writtenSince', () => {
  it('a store with revisions is judged by the revision, whatever the writers clocks said', () => {
    const changed = writtenSince({ before: record({ revision: 7 }) });
    // A machine whose clock runs an hour ahead, and one an hour behind.
    expect(changed(record({ revision: 7, updatedAt: Date.now() + 3_600_000 }))).toBe(false);
    expect(changed(record({ revision: 8, updatedAt: Date.now() - 3_600_000 }))).toBe(true);
  });

  it("a local store is judged by the write's time against the run's start", () => {
    const changed = writtenSince({ startedAt: 5_000 });
    expect(changed(record({ updatedAt: 5_000 }))).toBe(false);
    expect(changed(record({ updatedAt: 5_001 }))).toBe(true);
  });
});

describe('refreshProof', () => {
  it('is the refresh token and the verifier of the last challenge', () => {
    expect(refreshProof(record())).toEqual({ refreshToken: 'rt', codeVerifier: 'v' });
  });

  it.each([
    ['refreshToken', 'REFRESH_TOKEN_MISSING'],
    ['codeVerifier', 'PKCE_VERIFIER_MISSING'],
  ] as const)('without its %s the sign-in cannot be refreshed: exit 3', (field, code) => {
    expect(thrown(() => refreshProof(record({ [field]: undefined })), 3).code).toBe(code);
  });
});

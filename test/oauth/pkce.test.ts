import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { challengeS256, createPkcePair, createState, createVerifier, VERIFIER_RE } from '../../src/oauth/pkce.js';

describe('PKCE', () => {
  it('makes verifiers of 43..128 unreserved characters', () => {
    for (const bytes of [32, 48, 96]) {
      const v = createVerifier(bytes);
      expect(v).toMatch(VERIFIER_RE);
      expect(v.length).toBeGreaterThanOrEqual(43);
      expect(v.length).toBeLessThanOrEqual(128);
    }
    expect(() => createVerifier(31)).toThrow(RangeError);
    expect(() => createVerifier(97)).toThrow(RangeError);
  });

  it('computes the RFC 7636 Appendix B challenge', () => {
    expect(challengeS256('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('refuses to hash an invalid verifier', () => {
    expect(() => challengeS256('short')).toThrow(RangeError);
    expect(() => challengeS256(`${'a'.repeat(43)} `)).toThrow(RangeError);
  });

  it('gives a fresh, matching pair each time', () => {
    const a = createPkcePair();
    const b = createPkcePair();
    expect(a.verifier).not.toBe(b.verifier);
    expect(a.method).toBe('S256');
    expect(a.challenge).toBe(createHash('sha256').update(a.verifier).digest('base64url'));
    expect(a.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('makes unguessable states', () => {
    const states = new Set(Array.from({ length: 1000 }, () => createState()));
    expect(states.size).toBe(1000);
    for (const s of states) expect(s).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});

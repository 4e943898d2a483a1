import { describe, expect, it } from 'vitest';
import { decodeJwtPayload, describeIdentity, identityFromIdToken } from '../../src/oauth/jwt.js';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const jwt = (claims: unknown) => `${b64({ alg: 'HS256' })}.${b64(claims)}.sig`;

describe('ID token display', () => {
  it('reads name, email and subject', () => {
    const id = identityFromIdToken(jwt({ sub: 'u1', name: 'Alice Example', email: 'alice@example.com' }));
    expect(id).toEqual({ name: 'Alice Example', email: 'alice@example.com', subject: 'u1' });
    expect(describeIdentity(id)).toBe('Alice Example <alice@example.com>');
    expect(describeIdentity({ email: 'a@b' })).toBe('a@b');
    expect(describeIdentity({})).toBeUndefined();
  });

  it('shows control characters of claims escaped and drops invisible format characters', () => {
    expect(identityFromIdToken(jwt({ name: 'Eve\u001b]0;pwned\u0007 \u202eX\rY' })).name).toBe(
      'Eve\\u001b]0;pwned\\u0007 X\\rY',
    );
  });

  it('yields nothing for tokens that are not JWTs', () => {
    expect(decodeJwtPayload('opaque')).toBeNull();
    expect(decodeJwtPayload('a.b')).toBeNull();
    expect(decodeJwtPayload(`x.${Buffer.from('not json').toString('base64url')}.y`)).toBeNull();
    expect(decodeJwtPayload(`x.${b64([1, 2])}.y`)).toBeNull();
    expect(identityFromIdToken(undefined)).toEqual({});
    expect(identityFromIdToken(jwt({ name: 42 }))).toEqual({});
  });
});

import { describe, expect, it } from 'vitest';
import { decodeJwtPayload, describeIdentity, identityFromIdToken, jwtExpiry } from '../../src/oauth/jwt.js';
import { jwt } from '../support/jwt.js';

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

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

describe('the expiry of an access token', () => {
  it('is the exp claim in ms, fractions of a second included', () => {
    expect(jwtExpiry(jwt({ exp: 1_000_000_000 }))).toBe(1_000_000_000_000);
    expect(jwtExpiry(jwt({ exp: 1_000_000_000.5 }))).toBe(1_000_000_000_500);
    expect(jwtExpiry(jwt({ exp: 0 }))).toBe(0);
  });

  it('is unknown for an opaque token, a JWT without exp, an exp that is no number or no date', () => {
    expect(jwtExpiry('opaque-token')).toBeUndefined();
    expect(jwtExpiry(jwt({ sub: 'x' }))).toBeUndefined();
    expect(jwtExpiry(jwt({ exp: '1000000000' }))).toBeUndefined();
    expect(jwtExpiry(jwt({ exp: null }))).toBeUndefined();
    // Beyond the range of a Date, no expiry can be shown or compared meaningfully.
    expect(jwtExpiry(jwt({ exp: 1e300 }))).toBeUndefined();
    expect(
      jwtExpiry(`${b64({ alg: 'none' })}.${Buffer.from('{"exp":1e400}').toString('base64url')}.x`),
    ).toBeUndefined();
  });
});

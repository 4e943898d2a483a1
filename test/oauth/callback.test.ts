import { describe, expect, it } from 'vitest';
import { printableOAuthText, validateCallback } from '../../src/oauth/callback.js';

const expected = { state: 'the-state-value', issuer: 'https://id.example.com' };
const q = (s: string) => new URLSearchParams(s);

describe('validateCallback', () => {
  it('accepts a code with our state', () => {
    expect(validateCallback(q('code=abc&state=the-state-value'), expected)).toEqual({ kind: 'code', code: 'abc' });
  });

  it('ignores a missing, empty or wrong state, even with an error', () => {
    expect(validateCallback(q('code=abc'), expected)).toMatchObject({ kind: 'ignore', reason: 'missing state' });
    expect(validateCallback(q('code=abc&state='), expected)).toMatchObject({ kind: 'ignore' });
    expect(validateCallback(q('code=abc&state=the-state-valuX'), expected)).toMatchObject({
      kind: 'ignore',
      reason: 'state does not match',
    });
    expect(validateCallback(q('error=access_denied&state=other'), expected)).toMatchObject({ kind: 'ignore' });
  });

  it('ignores repeated parameters', () => {
    expect(validateCallback(q('code=a&code=b&state=the-state-value'), expected)).toMatchObject({ kind: 'ignore' });
    expect(validateCallback(q('code=a&state=the-state-value&state=the-state-value'), expected)).toMatchObject({
      kind: 'ignore',
    });
  });

  it('reports an error with its sanitised description', () => {
    expect(validateCallback(q('error=login_required&state=the-state-value'), expected)).toEqual({
      kind: 'error',
      error: 'login_required',
    });
    const r = validateCallback(
      q('error=access_denied&error_description=No%1B[31m%20thanks&state=the-state-value'),
      expected,
    );
    expect(r).toEqual({ kind: 'error', error: 'access_denied', description: 'No\\u001b[31m thanks' });
  });

  it('checks iss only when sent (RFC 9207)', () => {
    expect(validateCallback(q('code=c&state=the-state-value&iss=https%3A%2F%2Fid.example.com'), expected)).toEqual({
      kind: 'code',
      code: 'c',
    });
    expect(validateCallback(q('code=c&state=the-state-value&iss=https%3A%2F%2Fevil.example'), expected)).toMatchObject({
      kind: 'invalid',
      issuerMismatch: true,
    });
    expect(
      validateCallback(q('error=access_denied&state=the-state-value&iss=https%3A%2F%2Fevil.example'), expected),
    ).toMatchObject({
      kind: 'invalid',
    });
  });

  it('calls a response with neither code nor error invalid', () => {
    expect(validateCallback(q('state=the-state-value'), expected)).toMatchObject({ kind: 'invalid' });
  });
});

describe('printableOAuthText', () => {
  it('keeps the RFC 6749 character set, shows control characters escaped, and bounds the length', () => {
    expect(printableOAuthText('a"b\\c\u0007d\u00e9e\u001b[2J\r\u009b', 50)).toBe('abc\\u0007de\\u001b[2J\\r\\u009b');
    expect(printableOAuthText(' \n denied \t', 50)).toBe('denied');
    expect(printableOAuthText('x'.repeat(10), 4)).toBe('xxxx…');
  });
});

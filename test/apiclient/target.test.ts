import { describe, expect, it } from 'vitest';
import { targetUrl, setQueryParam } from '../../src/apiclient/target.js';
import { thrown } from '../support/thrown.js';

const BASE = 'http://127.0.0.1:9000';

const usage = (fn: () => unknown) => thrown(fn);

describe('targetUrl', () => {
  it('resolves bare and absolute paths against api-base-url', () => {
    expect(targetUrl('users', BASE)).toBe(`${BASE}/users`);
    expect(targetUrl('/v1/users?filter=x', BASE)).toBe(`${BASE}/v1/users?filter=x`);
    expect(targetUrl('users', `${BASE}/v1`)).toBe(`${BASE}/v1/users`);
    expect(targetUrl('users', `${BASE}/v1/`)).toBe(`${BASE}/v1/users`);
    expect(targetUrl('/v2/users', `${BASE}/v1`)).toBe(`${BASE}/v2/users`);
  });

  it('accepts a full URL of the API origin as is', () => {
    expect(targetUrl(`${BASE}/v1/events?cursor=a%2Bb`, BASE)).toBe(`${BASE}/v1/events?cursor=a%2Bb`);
  });

  it('refuses a full URL of another origin before any request (exit 2)', () => {
    const e = usage(() => targetUrl('http://evil.example/v1/users', BASE));
    expect(e.exitCode).toBe(2);
    expect(e.code).toBe('TARGET_CROSS_ORIGIN');
    expect(usage(() => targetUrl('ftp://x/y', BASE)).exitCode).toBe(2);
    expect(usage(() => targetUrl('  ', BASE)).exitCode).toBe(2);
    expect(usage(() => targetUrl('users', 'not a url')).exitCode).toBe(2);
  });

  it('an empty target is refused without naming a command: each caller says first what it needs', () => {
    expect(usage(() => targetUrl(' \t', BASE)).code).toBe('TARGET_MISSING');
  });

  it('refuses every path that the URL parser reads as scheme-relative, whatever the base', () => {
    const variants = [
      '//evil.example:4000/m/ok',
      '\\\\evil.example:4000\\m\\ok',
      '/\\evil.example:4000/m/ok',
      '\\/evil.example:4000/m/ok',
      '/\t/evil.example:4000/m/ok',
      '/\n/evil.example:4000/m/ok',
      ' //evil.example:4000/m/ok',
      '\t//evil.example:4000/m/ok',
      '///evil.example:4000/m/ok',
      '////evil.example:4000/m/ok',
      '//user@evil.example:4000/m/ok',
      'https:evil.example:4000/m/ok', // not the base's scheme, so a full URL (see below for the base's own)
      'HTTP://evil.example:4000/m/ok',
    ];
    for (const base of [BASE, `${BASE}/v1`, 'https://api.example.com/v1/']) {
      for (const v of variants.map((v) => (base.startsWith('https:') ? v.replace(/^https:/, 'http:') : v))) {
        const e = usage(() => targetUrl(v, base));
        expect(e.exitCode, `${JSON.stringify(v)} against ${base}`).toBe(2);
        expect(e.code).toBe('TARGET_CROSS_ORIGIN');
        expect(e.message).toMatch(/resolves to \S*evil\.example:4000, which is not the API origin/);
        expect(e.message).not.toMatch(/[\t\n]/);
      }
    }
  });

  it('names the refused URL as resolved, with secret parameters and credentials redacted', () => {
    const e = usage(() => targetUrl('//u:pw@evil.example/x?access_token=SECRET1&q=1', BASE));
    expect(e.message).toMatch(/^http:\/\/evil\.example\/x\?access_token=\[redacted\]&q=1 resolves to/);
    expect(e.message).not.toMatch(/SECRET1|pw@/);
    expect(e.code).toBe('TARGET_CROSS_ORIGIN');
  });

  it('still accepts paths that only look odd but stay on the API origin', () => {
    expect(targetUrl('/%2F%2Fevil.example/x', BASE)).toBe(`${BASE}/%2F%2Fevil.example/x`);
    expect(targetUrl('./users', `${BASE}/v1`)).toBe(`${BASE}/v1/users`);
    expect(targetUrl('?q=1', `${BASE}/v1`)).toBe(`${BASE}/v1/?q=1`);
    // A scheme without slashes is relative when it is the base's own scheme (WHATWG URL), so it stays here.
    expect(targetUrl('http:evil.example:4000/m/ok', BASE)).toBe(`${BASE}/evil.example:4000/m/ok`);
  });

  it('sets pageSize, pageIndex and the count query without touching other parameters', () => {
    expect(targetUrl('/v1/users?q=a%20b&pageSize=5', BASE, { pageSize: 50, pageIndex: 2 })).toBe(
      `${BASE}/v1/users?q=a%20b&pageSize=50&pageIndex=2`,
    );
    expect(targetUrl('/v1/users', BASE, { count: true, pageSize: 7 })).toBe(`${BASE}/v1/users?pageSize=0`);
    expect(targetUrl('/v1/users#frag', BASE, { pageIndex: 0 })).toBe(`${BASE}/v1/users?pageIndex=0`);
  });
});

describe('setQueryParam', () => {
  it('replaces every occurrence once and keeps the rest byte for byte', () => {
    const u = new URL('http://h/p?a=1+2&pageIndex=1&b=%7E&pageIndex=9');
    setQueryParam(u, 'pageIndex', '4');
    expect(u.search).toBe('?a=1+2&pageIndex=4&b=%7E');
  });
});

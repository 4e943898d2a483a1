import { describe, expect, it } from 'vitest';
import { pageKey, resolveNextLink } from '../../src/paginate/links.js';
import { createVisitedPages } from '../../src/paginate/visited.js';
import { thrown } from '../support/thrown.js';

const ORIGIN = 'http://127.0.0.1:8080';
const PAGE = `${ORIGIN}/v1/events?pageSize=10`;

const error = (fn: () => unknown) => thrown(fn);

describe('resolveNextLink', () => {
  it('keeps an absolute link of the API origin as returned', () => {
    expect(resolveNextLink(`${ORIGIN}/v1/events?cursor=abc%3D`, PAGE, ORIGIN, new Set())).toBe(
      `${ORIGIN}/v1/events?cursor=abc%3D`,
    );
  });

  it('resolves relative links against the page URL (RFC 3986 §5)', () => {
    expect(resolveNextLink('/v1/events?cursor=x', PAGE, ORIGIN, new Set())).toBe(`${ORIGIN}/v1/events?cursor=x`);
    expect(resolveNextLink('?cursor=y', PAGE, ORIGIN, new Set())).toBe(`${ORIGIN}/v1/events?cursor=y`);
    expect(resolveNextLink('more?c=1', `${ORIGIN}/v1/events/`, ORIGIN, new Set())).toBe(`${ORIGIN}/v1/events/more?c=1`);
  });

  it('drops the fragment, which is never sent', () => {
    expect(resolveNextLink('/v1/e?c=1#frag', PAGE, ORIGIN, new Set())).toBe(`${ORIGIN}/v1/e?c=1`);
    expect(resolveNextLink('/v1/e?c=1#', PAGE, ORIGIN, new Set())).toBe(`${ORIGIN}/v1/e?c=1`);
  });

  it.each([
    ['another host', 'http://evil.example/v1/events?c=1'],
    ['another port', 'http://127.0.0.1:8081/v1/events'],
    ['another scheme', 'https://127.0.0.1:8080/v1/events'],
    ['a protocol-relative host', '//evil.example/x'],
  ])('refuses %s with exit 5', (_n, href) => {
    const e = error(() => resolveNextLink(href, PAGE, ORIGIN, new Set()));
    expect(e.exitCode).toBe(5);
    expect(e.code).toBe('CONTRACT_NEXT_LINK_CROSS_ORIGIN');
  });

  it('refuses a link to a page already fetched', () => {
    const visited = new Set([pageKey(`${ORIGIN}/v1/events?pageSize=10`)]);
    const e = error(() => resolveNextLink('/v1/events?pageSize=10#x', PAGE, ORIGIN, visited));
    expect(e.exitCode).toBe(5);
    expect(e.code).toBe('CONTRACT_PAGINATION_LOOP');
  });

  it('refuses an unparseable link', () => {
    const e = error(() => resolveNextLink('http://[::1', PAGE, ORIGIN, new Set()));
    expect(e.exitCode).toBe(5);
    expect(e.code).toBe('CONTRACT_NEXT_LINK_INVALID');
  });
});

describe('createVisitedPages', () => {
  it('remembers short and long URLs, each apart from every other', () => {
    const visited = createVisitedPages();
    const short = `${ORIGIN}/v1/events?cursor=a`;
    const long = `${ORIGIN}/v1/events?cursor=${'x'.repeat(10_000)}`;
    const longToo = `${long.slice(0, -1)}y`;
    visited.add(short);
    visited.add(long);
    expect(visited.has(short)).toBe(true);
    expect(visited.has(long)).toBe(true);
    expect(visited.has(longToo)).toBe(false);
    expect(visited.has(`${short}b`)).toBe(false);
    // A long URL is stepped on by its loop check like a short one.
    expect(error(() => resolveNextLink(long, PAGE, ORIGIN, visited)).code).toBe('CONTRACT_PAGINATION_LOOP');
  });
});

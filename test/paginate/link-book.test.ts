import { describe, expect, it } from 'vitest';
import { IdcliError } from '../../src/errors.js';
import { indexUrl, LinkBook, linksTo, type NextLink } from '../../src/paginate/link-book.js';

const API = 'https://api.example.com';
const page = (i: number) => `${API}/v1/users?pageIndex=${i}&pageSize=2`;

/** The message of a link's error: a contract error (exit 5), as every refused link is. */
function refusal(link: NextLink): string {
  expect(link.url).toBeUndefined();
  expect(link.error).toBeInstanceOf(IdcliError);
  expect((link.error as IdcliError).exitCode).toBe(5);
  return (link.error as IdcliError).message;
}

describe('the book of links', () => {
  it('follows links on the API origin, relative or absolute, and enters each page it sets out to fetch', () => {
    const book = new LinkBook(API);
    book.enterFirst(`${API}/v1/users`);
    expect(book.follow({ next: '?pageIndex=1&pageSize=2' }, `${API}/v1/users`)).toEqual({ url: page(1) });
    expect(book.follow({ next: page(2) }, page(1))).toEqual({ url: page(2) });
    expect(refusal(book.follow({ next: page(1) }, page(2)))).toMatch(/already/);
  });

  it('refuses another origin, a scheme-relative link among them, and never enters it', () => {
    const book = new LinkBook(API);
    expect(refusal(book.follow({ next: '//evil.example/v1/users' }, page(0)))).toMatch(/another origin/);
    expect(refusal(book.check('http://api.example.com/v1/users', page(0)))).toMatch(/another origin/);
    expect(book.follow({ next: page(1) }, page(0))).toEqual({ url: page(1) });
  });

  it('sees a loop back to the first page through its self link, spelled otherwise than the first request', () => {
    const book = new LinkBook(API);
    book.enterFirst(`${API}/v1/users`);
    expect(book.follow({ next: page(1), self: page(0) }, `${API}/v1/users`)).toEqual({ url: page(1) });
    expect(refusal(book.follow({ next: page(0) }, page(1)))).toMatch(/already/);
  });

  it('by pageIndex: the pages in flight are no loop, a link back to one written is', () => {
    const book = new LinkBook(API);
    expect(book.written({ next: page(1) }, page(0), undefined, true)).toEqual({ url: page(1) });
    expect(book.written({ next: page(2) }, page(1), page(1), true)).toEqual({ url: page(2) });
    expect(refusal(book.written({ next: page(0) }, page(2), page(2), true))).toMatch(/already/);
    // Nothing after the page wanted (the limit, the last page): its link is not read.
    expect(book.written({ next: '//evil.example/' }, page(3), page(3), false)).toEqual({});
  });

  it('hands a page over to the walk by links under the URL its link spelled, entering the URL fetched', () => {
    const book = new LinkBook(API);
    expect(book.handOver(page(4), `${API}/v1/users?pageSize=2&pageIndex=4`)).toBe(
      `${API}/v1/users?pageSize=2&pageIndex=4`,
    );
    expect(book.handOver(page(5), undefined)).toBe(page(5));
    expect(refusal(book.check(page(5), page(6)))).toMatch(/already/);
  });
});

describe('planned pages', () => {
  it('builds the page by pageIndex from the first request, its filters kept', () => {
    expect(indexUrl(`${API}/v1/users?filter=active&pageSize=9#x`, 3, 2)).toBe(
      `${API}/v1/users?filter=active&pageSize=2&pageIndex=3`,
    );
  });

  it('a link names the planned page whatever the order of its parameters, and only that page', () => {
    expect(linksTo('?pageSize=2&pageIndex=1', page(0), page(1))).toBe(true);
    expect(linksTo(page(2), page(0), page(1))).toBe(false);
    expect(linksTo(`${API}/v2/users?pageIndex=1&pageSize=2`, page(0), page(1))).toBe(false);
    expect(linksTo(undefined, page(0), page(1))).toBe(false);
    expect(linksTo('http://[bad', page(0), page(1))).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { peekLinks } from '../../src/paginate/peek-links.js';

const b = (s: string) => Buffer.from(s, 'utf8');

describe('peekLinks (reading links from the end of a page)', () => {
  it('reads next and self when links is the last member', () => {
    expect(
      peekLinks(b('{"items":[{"a":1}],"links":{"self":{"href":"/s"},"first":"/f","next":{"href":"/n?c=1"}}}')),
    ).toEqual({
      next: '/n?c=1',
      self: '/s',
    });
    expect(peekLinks(b('{"items":[],"links":{"self":"/s","first":"/f"}}'))).toEqual({ self: '/s' });
  });

  it('copes with pretty-printing and strings full of quotes, backslashes and braces', () => {
    const page = `{
  "items": [ {"s": "}\\\\\\"{\\\\"} ],
  "links" : {
    "self": { "href": "/s?x=\\"}\\\\" },
    "next": "/n\\\\"
  }
}
`;
    expect(JSON.parse(page).links.next).toBe('/n\\');
    expect(peekLinks(b(page))).toEqual({ next: '/n\\', self: '/s?x="}\\' });
  });

  it('matches JSON.parse on many generated pages', () => {
    const nasty = ['a"b', 'c\\', '\\"', '}{][', ',"links":{"next":"/evil"}', 'é😀'];
    for (let i = 0; i < 200; i++) {
      const item = { s: nasty[i % nasty.length], n: i, t: [nasty[(i + 1) % nasty.length]] };
      const links = {
        self: { href: `/s${i}` },
        first: '/f',
        ...(i % 3 ? { next: i % 2 ? `/n${i}` : { href: `/n${i}` } } : {}),
      };
      const text = JSON.stringify({ pageIndex: i, items: [item], links }, null, i % 2 ? 2 : undefined);
      const want = JSON.parse(text).links;
      const nextHref = typeof want.next === 'string' ? want.next : want.next?.href;
      expect(peekLinks(b(text))).toEqual(
        nextHref === undefined ? { self: `/s${i}` } : { next: nextHref, self: `/s${i}` },
      );
    }
  });

  it('gives up (undefined) when it cannot tell cheaply', () => {
    expect(peekLinks(b('{"links":{"self":"/s","next":"/n"},"items":[]}'))).toBeUndefined();
    expect(peekLinks(b('{"items":[],"links":{"self":"/s","next":null}}'))).toBeUndefined();
    expect(peekLinks(b('{"items":[],"links":"nope"}'))).toBeUndefined();
    expect(peekLinks(b('[1,2]'))).toBeUndefined();
    expect(peekLinks(b(''))).toBeUndefined();
    expect(peekLinks(b('{"items":[],"links":{"self":"/s"'))).toBeUndefined();
    // An item that merely looks like links, with the real links missing: not mistaken for them.
    expect(peekLinks(b('{"items":[{"links":{"next":"/evil"}}]}'))).toBeUndefined();
  });
});

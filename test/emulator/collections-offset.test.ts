import { describe, expect, it } from 'vitest';
import { bearer, eachEmulator, get, getJson, href } from './helpers.js';
import type { Emulator } from './index.js';

describe('offset-based collections', { timeout: 30_000 }, () => {
  let emu: Emulator;
  let auth: Record<string, string>;
  eachEmulator((e, a) => {
    emu = e;
    auth = a;
  });

  const page = (query = '', path = '/v1/users') => getJson(`${emu.baseUrl}${path}${query}`, auth);
  const links = (body: Record<string, unknown>) => body['links'] as Record<string, unknown>;
  const ids = (body: Record<string, unknown>) => (body['items'] as Array<{ id: string }>).map((i) => i.id);

  it('defaults to pageIndex=0 and pageSize=100, with normalised absolute links', async () => {
    const { status, body } = await page();
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual(['pageIndex', 'totalItems', 'items', 'links']);
    expect(body['pageIndex']).toBe(0);
    expect(body['totalItems']).toBe(250);
    expect(ids(body)).toHaveLength(100);
    expect(ids(body)[0]).toBe('u0001');
    const l = links(body);
    expect(Object.keys(l)).toEqual(['self', 'first', 'next', 'last']);
    expect(href(l['self'])).toBe(`${emu.baseUrl}/v1/users?pageIndex=0&pageSize=100`);
    expect(href(l['first'])).toBe(`${emu.baseUrl}/v1/users?pageIndex=0&pageSize=100`);
    expect(href(l['next'])).toBe(`${emu.baseUrl}/v1/users?pageIndex=1&pageSize=100`);
    expect(href(l['last'])).toBe(`${emu.baseUrl}/v1/users?pageIndex=2&pageSize=100`);
  });

  it('walks every page by links.next: full pages, then one short last page without next', async () => {
    const seen: string[] = [];
    let url: string | undefined = `${emu.baseUrl}/v1/users?pageSize=40`;
    const sizes: number[] = [];
    while (url) {
      const { body } = await getJson(url, auth);
      sizes.push(ids(body).length);
      seen.push(...ids(body));
      const l = links(body);
      if (body['pageIndex'] === 0) expect(l['prev']).toBeUndefined();
      else expect(href(l['prev'])).toContain(`pageIndex=${Number(body['pageIndex']) - 1}&`);
      url = href(l['next']);
    }
    expect(sizes).toEqual([40, 40, 40, 40, 40, 40, 10]);
    expect(seen).toEqual(Array.from({ length: 250 }, (_, i) => `u${String(i + 1).padStart(4, '0')}`));
  });

  it('serves the same items by pageIndex, in a stable order', async () => {
    const byIndex: string[] = [];
    for (let i = 0; i < 3; i++) byIndex.push(...ids((await page(`?pageIndex=${i}`)).body));
    const again: string[] = [];
    for (let i = 0; i < 3; i++) again.push(...ids((await page(`?pageIndex=${i}`)).body));
    expect(byIndex).toHaveLength(250);
    expect(again).toEqual(byIndex);
  });

  it('has no next on a full last page, and serves an empty collection', async () => {
    emu.setCollection('/v1/two', { type: 'offset', items: ['{"id":"a"}', '{"id":"b"}'] });
    const last = await page('?pageIndex=1&pageSize=1', '/v1/two');
    expect(links(last.body)['next']).toBeUndefined();
    expect(href(links(last.body)['prev'])).toContain('pageIndex=0&pageSize=1');
    emu.setCollection('/v1/none', { type: 'offset', items: [] });
    const empty = await page('', '/v1/none');
    expect(empty.body['items']).toEqual([]);
    expect(empty.body['totalItems']).toBe(0);
    expect(Object.keys(links(empty.body))).toEqual(['self', 'first', 'last']);
  });

  it('answers pageSize=0 with the count only: empty items, self/first/last, no next', async () => {
    const { body } = await page('?pageSize=0');
    expect(body['items']).toEqual([]);
    expect(body['totalItems']).toBe(250);
    expect(Object.keys(links(body))).toEqual(['self', 'first', 'last']);
  });

  it('past the end: empty items, prev back to the last real page', async () => {
    const { body } = await page('?pageIndex=9');
    expect(body['items']).toEqual([]);
    expect(links(body)['next']).toBeUndefined();
    expect(href(links(body)['prev'])).toBe(`${emu.baseUrl}/v1/users?pageIndex=2&pageSize=100`);
  });

  it('refuses pageIndex/pageSize that are not non-negative integers, duplicates and a cursor', async () => {
    for (const q of [
      '?pageIndex=-1',
      '?pageIndex=1.5',
      '?pageIndex=abc',
      '?pageIndex=',
      '?pageSize=01',
      '?pageSize=1e2',
      '?pageSize=99999999999999999999',
      '?pageSize=10&pageSize=20',
      '?cursor=abc',
      '?access_token=x',
    ]) {
      const { status, body, headers } = await page(q);
      expect(status, q).toBe(400);
      expect(headers.get('content-type')).toMatch(/^application\/json/);
      expect(body['error']).toBe('invalid_request');
    }
    expect((await page('?pageIndex=2&pageSize=0')).status).toBe(200);
  });

  it('keeps other query parameters in every link', async () => {
    const { body } = await page('?filter=a%20b&pageSize=100&sort=name');
    for (const link of Object.values(links(body))) expect(href(link)).toContain('filter=a+b&sort=name&pageIndex=');
  });

  it('serves the raw item bytes exactly: big integers, escapes, key order, inner whitespace', async () => {
    const items = [
      '{"z":1,"id":12345678901234567890123,"a":"\\u00e9\\n\\"q\\""}',
      '{ "id" : 2.50 , "nested" : { "b" : [1, 2, 3] } }',
      '{"id":"é ☃ 𝄞","big":-9007199254740993}',
    ];
    emu.setCollection('/v1/raw', { type: 'offset', items });
    const { text } = await page('', '/v1/raw');
    expect(text).toContain(`"items":[${items.join(',')}]`);
  });

  it('spells its links with pageSize first when asked to', async () => {
    emu.setCollection('/v1/spelled', {
      type: 'offset',
      items: ['{"a":1}', '{"a":2}', '{"a":3}'],
      querySpelling: 'pageSize-first',
    });
    const { body } = await page('?pageSize=1&pageIndex=1&x=y', '/v1/spelled');
    const l = links(body);
    expect(href(l['self'])).toBe(`${emu.baseUrl}/v1/spelled?x=y&pageSize=1&pageIndex=1`);
    expect(href(l['next'])).toBe(`${emu.baseUrl}/v1/spelled?x=y&pageSize=1&pageIndex=2`);
  });

  it('supports the string, relative and pretty link variants', async () => {
    emu.setCollection('/v1/s', { type: 'offset', items: ['{"id":1}', '{"id":2}'], linkStyle: 'string' });
    const s = await page('?pageSize=1', '/v1/s');
    expect(links(s.body)['next']).toBe(`${emu.baseUrl}/v1/s?pageIndex=1&pageSize=1`);
    emu.setCollection('/v1/r', { type: 'offset', items: ['{"id":1}', '{"id":2}'], linkStyle: 'relative' });
    const r = await page('?pageSize=1', '/v1/r');
    expect(links(r.body)['next']).toEqual({ href: '/v1/r?pageIndex=1&pageSize=1' });
    const items = ['{"id":1,  "x":"keep  spacing"}', '{"id":2}'];
    emu.setCollection('/v1/p', { type: 'offset', items, pretty: true });
    const p = await page('?pageSize=1', '/v1/p');
    expect(p.text).toContain('\n  "items": [\n    {"id":1,  "x":"keep  spacing"}\n  ]');
    expect(p.text.split('\n').length).toBeGreaterThan(10);
    expect(href(links(p.body)['next'])).toBe(`${emu.baseUrl}/v1/p?pageIndex=1&pageSize=1`);
  });

  it('requires a bearer token unless public (RFC 6750 §3)', async () => {
    const none = await get(`${emu.baseUrl}/v1/users`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="idcli-emulator"');
    const unknown = await get(`${emu.baseUrl}/v1/users`, bearer('not-a-token'));
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get('www-authenticate')).toMatch(/^Bearer realm="idcli-emulator", error="invalid_token"/);
    const basic = await get(`${emu.baseUrl}/v1/users`, { authorization: 'Basic abc' });
    expect(basic.status).toBe(401);
    const malformed = await get(`${emu.baseUrl}/v1/users`, { authorization: 'Bearer a b' });
    expect(malformed.status).toBe(400);
    expect(
      (
        await get(`${emu.baseUrl}/v1/users`, {
          authorization: auth['authorization']?.replace('Bearer', 'bearer') ?? '',
        })
      ).status,
    ).toBe(200);
    emu.setCollection('/v1/open', { type: 'offset', items: ['{"id":1}'], public: true });
    expect((await get(`${emu.baseUrl}/v1/open`)).status).toBe(200);
  });

  it('answers 405 to other methods and 404 JSON to unknown paths', async () => {
    const post = await fetch(`${emu.baseUrl}/v1/users`, { method: 'POST', headers: auth });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    const missing = await getJson(`${emu.baseUrl}/v1/nothing`, auth);
    expect(missing.status).toBe(404);
    expect(missing.body['error']).toBe('not_found');
    expect((await get(`${emu.baseUrl}/v1/users/`, auth)).status).toBe(404);
  });

  it('logs every request with its bearer and status', async () => {
    await page('?pageSize=5');
    const last = emu.requests.at(-1);
    expect(last).toMatchObject({ method: 'GET', path: '/v1/users', url: '/v1/users?pageSize=5', status: 200 });
    expect(last?.bearer).toBe(auth['authorization']?.slice('Bearer '.length));
    expect(last?.headers['authorization']).toBe(auth['authorization']);
  });
});

import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { negotiate } from './compression.js';
import { eachEmulator, rawGet } from './helpers.js';
import { type Emulator, generateRecords, MIN_COMPRESSED_BODY } from './index.js';

describe('Accept-Encoding negotiation', () => {
  it.each([
    [undefined, 'identity'],
    ['', 'identity'],
    ['gzip', 'gzip'],
    ['GZIP', 'gzip'],
    ['x-gzip', 'gzip'],
    ['gzip, deflate', 'gzip'],
    ['gzip, br', 'br'],
    ['deflate, gzip, br, zstd', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['gzip;q=0.5, identity', 'identity'],
    ['identity;q=0, gzip', 'gzip'],
    ['*', 'br'],
    ['*;q=0, gzip;q=0.2', 'gzip'],
    ['deflate', 'identity'],
    ['zstd', 'identity'],
    [' , gzip ,', 'gzip'],
    ['br;Q=0.001', 'br'],
  ])('%j → %s', (header, coding) => {
    expect(negotiate(header)).toEqual({ coding });
  });

  it.each(['identity;q=0', '*;q=0', 'gzip;q=0, identity;q=0', 'deflate, *;q=0'])('%j → 406', (header) => {
    expect(negotiate(header)).toMatchObject({ refused: 406 });
  });

  it.each(['gzip;q=1.5', 'gzip;q=0.0001', 'gzip;level=9', 'gzip;q=1;q=1', 'gz ip', 'gzip;q=', '"gzip"'])(
    '%j → 400',
    (header) => {
      expect(negotiate(header)).toMatchObject({ refused: 400 });
    },
  );
});

describe('compressed responses', { timeout: 30_000 }, () => {
  let emu: Emulator;
  let auth: Record<string, string>;
  let page: string;
  eachEmulator((e, a) => {
    emu = e;
    auth = a;
    page = `${emu.baseUrl}/v1/records?pageSize=100`;
  });

  it('without Accept-Encoding: identity, with Vary', async () => {
    const res = await rawGet(page, auth);
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['vary']).toBe('accept-encoding');
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    const items = (JSON.parse(res.body.toString('utf8')) as { items: unknown[] }).items;
    expect(items.map((i) => JSON.stringify(i))).toEqual(generateRecords(100));
  });

  it.each([
    ['gzip', gunzipSync],
    ['br', brotliDecompressSync],
  ] as const)('%s: the coding asked for, its length, and the identity bytes once decoded', async (coding, decode) => {
    const plain = (await rawGet(page, auth)).body;
    const res = await rawGet(page, { ...auth, 'accept-encoding': coding });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe(coding);
    expect(res.headers['vary']).toBe('accept-encoding');
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    expect(res.body.length).toBeLessThan(plain.length / 3);
    expect(decode(res.body).equals(plain)).toBe(true);
  });

  it('every page of a walk decodes to the bytes served without compression (offset, cursor, pretty)', async () => {
    emu.setCollection('/v1/pretty', { type: 'offset', items: generateRecords(30), pretty: true });
    emu.setCollection('/v1/stream', { type: 'cursor', items: generateRecords(30), totalKnown: true });
    for (const first of ['/v1/records?pageSize=300', '/v1/pretty?pageSize=7', '/v1/stream?pageSize=7']) {
      let url: string | undefined = `${emu.baseUrl}${first}`;
      let pages = 0;
      while (url !== undefined) {
        const plain = await rawGet(url, auth);
        const zipped = await rawGet(url, { ...auth, 'accept-encoding': 'gzip' });
        expect(zipped.headers['content-encoding']).toBe('gzip');
        expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
        const links = (JSON.parse(plain.body.toString('utf8')) as { links: { next?: { href: string } } }).links;
        url = links.next?.href;
        pages += 1;
      }
      expect(pages).toBeGreaterThan(2);
    }
  });

  it('bodies under the threshold go as they are, still with Vary', async () => {
    const small = await rawGet(`${emu.baseUrl}/v1/records?pageSize=1`, { ...auth, 'accept-encoding': 'gzip, br' });
    expect(small.body.length).toBeLessThan(MIN_COMPRESSED_BODY);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.headers['vary']).toBe('accept-encoding');
    JSON.parse(small.body.toString('utf8'));
    const refused = await rawGet(page, { 'accept-encoding': 'gzip' });
    expect(refused.status).toBe(401);
    expect(refused.headers['content-encoding']).toBeUndefined();
  });

  it('HEAD announces the encoded length and sends no body', async () => {
    const item = `${emu.baseUrl}/v1/users/42`;
    emu.setResource('/v1/users/42', `[${generateRecords(10).join(',')}]`);
    const get = await rawGet(item, { ...auth, 'accept-encoding': 'gzip' });
    expect(get.headers['content-encoding']).toBe('gzip');
    const head = await rawGet(item, { ...auth, 'accept-encoding': 'gzip' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-encoding']).toBe('gzip');
    expect(head.headers['content-length']).toBe(String(get.body.length));
    expect(head.body.length).toBe(0);
  });

  it('a replaced collection is served with its new items, never a stale encoding', async () => {
    const before = gunzipSync((await rawGet(page, { ...auth, 'accept-encoding': 'gzip' })).body);
    emu.setCollection('/v1/records', { type: 'offset', items: generateRecords(1000, 2) });
    const after = gunzipSync((await rawGet(page, { ...auth, 'accept-encoding': 'gzip' })).body);
    expect(after.equals(before)).toBe(false);
    expect(after.equals((await rawGet(page, auth)).body)).toBe(true);
  });

  it('406 when every coding is ruled out, 400 for a malformed header; both logged', async () => {
    const none = await rawGet(page, { ...auth, 'accept-encoding': 'identity;q=0' });
    expect(none.status).toBe(406);
    expect(JSON.parse(none.body.toString('utf8'))).toMatchObject({ error: 'not_acceptable' });
    const bad = await rawGet(page, { ...auth, 'accept-encoding': 'gzip;q=2' });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body.toString('utf8'))).toMatchObject({ error: 'invalid_request' });
    expect(emu.requests.map((r) => r.status)).toEqual([406, 400]);
  });
});

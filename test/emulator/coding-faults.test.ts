import { createGunzip, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { eachEmulator, rawGet } from './helpers.js';
import { type Emulator } from './index.js';

/** Streams a gzip body through an inflater: the decoded byte count, whether every byte was zero, or the error. */
function inflate(body: Buffer): Promise<{ bytes: number; zeros: boolean; error?: string }> {
  return new Promise((resolve) => {
    const gunzip = createGunzip();
    const none = Buffer.alloc(64 * 1024);
    let bytes = 0;
    let zeros = true;
    gunzip.on('data', (c: Buffer) => {
      bytes += c.length;
      if (zeros && (c.length > none.length || !c.equals(none.subarray(0, c.length)))) zeros = false;
    });
    gunzip.on('end', () => resolve({ bytes, zeros }));
    gunzip.on('error', (e) => resolve({ bytes, zeros, error: e.message }));
    gunzip.end(body);
  });
}

describe('coding faults', { timeout: 60_000 }, () => {
  let emu: Emulator;
  let auth: Record<string, string>;
  let page: string;
  eachEmulator((e, a) => {
    emu = e;
    auth = a;
    page = `${emu.baseUrl}/v1/records?pageSize=50`;
  });

  it('encoding: an unasked coding labels the page as it is, once, then normal service', async () => {
    const plain = (await rawGet(page, auth)).body;
    emu.inject({ path: '/v1/records', fault: { kind: 'encoding', coding: 'x-snappy' } });
    const odd = await rawGet(page, { ...auth, 'accept-encoding': 'gzip' });
    expect(odd.status).toBe(200);
    expect(odd.headers['content-encoding']).toBe('x-snappy');
    expect(odd.headers['vary']).toBe('accept-encoding');
    expect(odd.body.equals(plain)).toBe(true);
    const next = await rawGet(page, { ...auth, 'accept-encoding': 'gzip' });
    expect(next.headers['content-encoding']).toBe('gzip');
  });

  it('encoding: a known coding the request did not accept is really encoded', async () => {
    const plain = (await rawGet(page, auth)).body;
    emu.inject({ path: '/v1/records', fault: { kind: 'encoding', coding: 'gzip' } });
    const res = await rawGet(page, auth);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(res.body).equals(plain)).toBe(true);
  });

  it('encoding: a list is applied in the order it names (RFC 9110 §8.4), unknown codings as they are', async () => {
    const plain = (await rawGet(page, auth)).body;
    emu.inject({ path: '/v1/records', fault: { kind: 'encoding', coding: 'gzip, gzip' } });
    const twice = await rawGet(page, auth);
    expect(twice.headers['content-encoding']).toBe('gzip, gzip');
    expect(gunzipSync(gunzipSync(twice.body)).equals(plain)).toBe(true);
    emu.inject({ path: '/v1/records', fault: { kind: 'encoding', coding: 'gzip, x-snappy' } });
    const mixed = await rawGet(page, auth);
    expect(mixed.headers['content-encoding']).toBe('gzip, x-snappy');
    expect(gunzipSync(mixed.body).equals(plain)).toBe(true);
  });

  it('gzip-bomb: about 1 MB on the wire that inflates to exactly 1 GiB of zeros', async () => {
    emu.inject({ path: '/v1/records', fault: { kind: 'gzip-bomb' } });
    const before = emu.wireBytes();
    const res = await rawGet(page, { ...auth, 'accept-encoding': 'gzip' });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    expect(res.body.length).toBeGreaterThan(900_000);
    expect(res.body.length).toBeLessThan(1_200_000);
    expect(emu.wireBytes() - before).toBeLessThan(res.body.length + 1024);
    expect(await inflate(res.body)).toEqual({ bytes: 2 ** 30, zeros: true });
    expect((await rawGet(page, { ...auth, 'accept-encoding': 'gzip' })).body.length).toBeLessThan(100_000);
  });

  it('gzip-bomb: any inflated size, whole MiB or not', async () => {
    for (const inflatedBytes of [1, 3 * 1024 * 1024 + 17, 1024 * 1024]) {
      emu.inject({ path: '/v1/records', fault: { kind: 'gzip-bomb', inflatedBytes } });
      const res = await rawGet(page, auth);
      expect(await inflate(res.body)).toEqual({ bytes: inflatedBytes, zeros: true });
    }
    emu.inject({ path: '/v1/records', fault: { kind: 'gzip-bomb', inflatedBytes: 0 } });
    expect((await rawGet(page, auth)).status).toBe(500);
    expect(emu.errors).toHaveLength(1);
    emu.errors.length = 0;
  });

  it('corrupt-gzip: the first half decodes, then the stream breaks; the next response is good', async () => {
    const plain = (await rawGet(page, auth)).body;
    emu.inject({ path: '/v1/records', fault: { kind: 'corrupt-gzip' } });
    const bad = await rawGet(page, { ...auth, 'accept-encoding': 'gzip' });
    expect(bad.status).toBe(200);
    expect(bad.headers['content-encoding']).toBe('gzip');
    expect(Number(bad.headers['content-length'])).toBe(bad.body.length);
    const decoded = await inflate(bad.body);
    expect(decoded.error).toMatch(/invalid block type/);
    expect(() => gunzipSync(bad.body)).toThrow();
    const good = await rawGet(page, { ...auth, 'accept-encoding': 'gzip' });
    expect(gunzipSync(good.body).equals(plain)).toBe(true);
  });

  it('per request or per collection, as every fault: nth, times and path select', async () => {
    emu.inject({ path: '/v1/records', nth: 2, fault: { kind: 'corrupt-gzip' } });
    emu.inject({
      path: '/v1/events',
      times: Number.POSITIVE_INFINITY,
      fault: { kind: 'encoding', coding: 'x-snappy' },
    });
    const codings = async (url: string) => (await rawGet(url, { ...auth, 'accept-encoding': 'gzip' })).headers;
    const events = `${emu.baseUrl}/v1/events?pageSize=50`;
    const first = await rawGet(page, { ...auth, 'accept-encoding': 'gzip' });
    expect(gunzipSync(first.body).length).toBeGreaterThan(0);
    const second = await rawGet(page, { ...auth, 'accept-encoding': 'gzip' });
    expect(() => gunzipSync(second.body)).toThrow();
    for (let i = 0; i < 3; i++) expect((await codings(events))['content-encoding']).toBe('x-snappy');
    emu.clearFaults();
    expect((await codings(events))['content-encoding']).toBe('gzip');
  });
});

import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearer, getJson } from './helpers.js';
import { type Emulator, generateRecords, startEmulator } from './index.js';

describe('realistic records', () => {
  const records = generateRecords(5000);

  it('are JSON objects of about 450 bytes, with uuids, emails, timestamps, a nested object and arrays', () => {
    const sizes = records.map((r) => Buffer.byteLength(r));
    const mean = sizes.reduce((a, b) => a + b, 0) / sizes.length;
    expect(mean).toBeGreaterThan(400);
    expect(mean).toBeLessThan(520);
    expect(Math.min(...sizes)).toBeGreaterThan(300);
    expect(Math.max(...sizes)).toBeLessThan(700);
    for (const text of records.slice(0, 200)) {
      const r = JSON.parse(text) as Record<string, unknown>;
      expect(JSON.stringify(r)).toBe(text);
      expect(r['id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(r['email']).toMatch(/^[a-z]+\.[a-z]+\d+@[a-z.]+$/);
      expect(new Date(r['createdAt'] as string).toISOString()).toBe(r['createdAt']);
      expect(Date.parse(r['lastLoginAt'] as string)).toBeGreaterThanOrEqual(Date.parse(r['createdAt'] as string));
      expect(r['address']).toMatchObject({ city: expect.any(String), country: expect.stringMatching(/^[A-Z]{2}$/) });
      expect(Array.isArray(r['roles']) && Array.isArray(r['groups'])).toBe(true);
      expect(r['avatarHash']).toMatch(/^[0-9a-f]{32}$/);
    }
    expect(new Set(records.map((r) => (JSON.parse(r) as { id: string }).id)).size).toBe(records.length);
    expect(records.some((r) => /[^\x00-\x7f]/.test(r))).toBe(true);
  });

  it('compress like real data (a few times smaller), not like a repeated template', () => {
    const page = Buffer.from(`[${records.slice(0, 1000).join(',')}]`);
    const gzip = page.length / gzipSync(page).length;
    const br = page.length / brotliCompressSync(page, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }).length;
    expect(gzip).toBeGreaterThan(3);
    expect(gzip).toBeLessThan(6);
    expect(br).toBeGreaterThan(3);
    expect(br).toBeLessThan(6.5);
  });

  it('are deterministic: record i is the same for any count, and another seed gives other records', () => {
    expect(generateRecords(10)).toEqual(records.slice(0, 10));
    expect(generateRecords(5000, 1)).toEqual(records);
    const other = generateRecords(10, 2);
    expect(other.filter((r, i) => r === records[i])).toEqual([]);
  });
});

describe('the /v1/records collection', () => {
  let emu: Emulator;
  beforeEach(async () => {
    emu = await startEmulator({ recordItems: 120 });
  });
  afterEach(async () => {
    await emu.close();
  });

  it('serves the records offset-based, as generated', async () => {
    const auth = bearer(emu.mintTokens().access_token);
    const { status, body } = await getJson(`${emu.baseUrl}/v1/records?pageIndex=1&pageSize=100`, auth);
    expect(status).toBe(200);
    expect(body['totalItems']).toBe(120);
    expect((body['items'] as unknown[]).map((i) => JSON.stringify(i))).toEqual(generateRecords(120).slice(100));
  });
});

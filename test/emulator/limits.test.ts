// The emulator's optional limits (a maximum page size, a rate limit on requests in flight) and the cursor-based
// realistic records.
import { afterEach, describe, expect, it } from 'vitest';
import { bearer, get, getJson, href } from './helpers.js';
import { type Emulator, type EmulatorOptions, startEmulator } from './index.js';

describe('emulator limits', { timeout: 30_000 }, () => {
  let emu: Emulator | undefined;
  const start = async (opts: EmulatorOptions) => {
    emu = await startEmulator(opts);
    return { emu, auth: bearer(emu.mintTokens().access_token) };
  };
  afterEach(async () => {
    expect(emu?.errors).toEqual([]);
    await emu?.close();
    emu = undefined;
  });

  it('maxPageSize refuses a larger pageSize with 400 by default, offset and cursor alike', async () => {
    const { emu, auth } = await start({ maxPageSize: 50 });
    for (const path of ['/v1/users', '/v1/events']) {
      const refused = await getJson(`${emu.baseUrl}${path}?pageSize=51`, auth);
      expect(refused.status).toBe(400);
      expect(refused.body['error_description']).toBe('pageSize must be at most 50.');
      expect((await getJson(`${emu.baseUrl}${path}?pageSize=50`, auth)).status).toBe(200);
    }
  });

  it('maxPageSize with cap serves at most that many items, and its links carry the size served', async () => {
    const { emu, auth } = await start({ maxPageSize: 40, overMaxPageSize: 'cap' });
    const offset = await getJson(`${emu.baseUrl}/v1/users?pageSize=1000`, auth);
    expect(offset.body['items']).toHaveLength(40);
    const links = offset.body['links'] as Record<string, unknown>;
    expect(href(links['next'])).toBe(`${emu.baseUrl}/v1/users?pageIndex=1&pageSize=40`);
    const cursor = await getJson(`${emu.baseUrl}/v1/events?pageSize=1000`, auth);
    expect(cursor.body['items']).toHaveLength(40);
    const next = href((cursor.body['links'] as Record<string, unknown>)['next']) as string;
    expect((await getJson(next, auth)).body['items']).toHaveLength(40);
  });

  it('serves the realistic records cursor-based too, the same items in the same order', async () => {
    const { emu, auth } = await start({ recordItems: 30 });
    const offset = await getJson(`${emu.baseUrl}/v1/records?pageSize=30`, auth);
    const cursor = await getJson(`${emu.baseUrl}/v1/records-cursor?pageSize=20`, auth);
    expect(cursor.body).not.toHaveProperty('pageIndex');
    const rest = await getJson(href((cursor.body['links'] as Record<string, unknown>)['next']) as string, auth);
    expect([...(cursor.body['items'] as unknown[]), ...(rest.body['items'] as unknown[])]).toEqual(
      offset.body['items'],
    );
  });

  it('maxInFlight answers 429 with Retry-After past that many collection requests in flight, and logs them', async () => {
    const { emu, auth } = await start({ maxInFlight: 2, latencyMs: 300, rateLimitRetryAfter: '3' });
    const url = `${emu.baseUrl}/v1/users?pageSize=1`;
    const answers = await Promise.all([0, 1, 2, 3].map(() => get(url, auth)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 429, 429]);
    expect(answers.find((r) => r.status === 429)?.headers.get('retry-after')).toBe('3');
    const logged = emu.requests.filter((r) => r.path === '/v1/users');
    // A 429 is answered at once, so the next arrival may find it gone: the log says what each one found.
    expect(logged.map((r) => r.inFlight).slice(0, 3)).toEqual([1, 2, 3]);
    for (const r of logged) expect(r.status).toBe((r.inFlight as number) <= 2 ? 200 : 429);
    // Once they are answered, the count is back to none in flight.
    expect((await get(url, auth)).status).toBe(200);
    expect(emu.requests.at(-1)?.inFlight).toBe(1);
  });
});

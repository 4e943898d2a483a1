import { request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { until } from '../support/until.js';
import { bearer } from './helpers.js';
import { type Emulator, startEmulator } from './index.js';
import { VirtualClock } from './virtual-clock.js';

describe('resource API', { timeout: 30_000 }, () => {
  let emu: Emulator;
  /** The clock of the emulator's waits (/v1/slow): what it waited is read from it. */
  let clock: VirtualClock;
  let auth: Record<string, string>;
  const ITEM = '{\n  "id": 9007199254740993,\n  "name": "Ada"\n}\n';
  beforeEach(async () => {
    clock = new VirtualClock();
    emu = await startEmulator({ clock });
    auth = bearer(emu.mintTokens().access_token);
    emu.setResource('/v1/users/42', ITEM);
  });
  afterEach(async () => {
    expect(emu.errors).toEqual([]);
    await emu.close();
  });

  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${emu.baseUrl}${path}`, {
      redirect: 'manual',
      ...init,
      headers: { ...auth, ...(init.headers as Record<string, string> | undefined) },
    });
  const asJson = { 'content-type': 'application/json' };

  it('GET returns the stored bytes exactly; HEAD the same head without a body', async () => {
    const res = await call('/v1/users/42');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Buffer.from(await res.arrayBuffer()).toString('utf8')).toBe(ITEM);
    const head = await call('/v1/users/42', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('PUT stores the body byte for byte; PATCH merges an object; DELETE answers 204, then 404', async () => {
    const text = '{"id":1,  "n": 123456789012345678901234567890}';
    const put = await call('/v1/users/42', { method: 'PUT', headers: asJson, body: text });
    expect(put.status).toBe(200);
    expect(await put.text()).toBe(text);
    expect(emu.resource('/v1/users/42')!.toString()).toBe(text);
    expect(emu.requests.at(-1)!.body!.toString()).toBe(text);

    emu.setResource('/v1/users/7', '{"name":"Ada","role":"user"}');
    const patch = await call('/v1/users/7', { method: 'PATCH', headers: asJson, body: '{"role":"admin"}' });
    expect(await patch.json()).toEqual({ name: 'Ada', role: 'admin' });

    const del = await call('/v1/users/7', { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    expect(emu.resource('/v1/users/7')).toBeUndefined();
    expect((await call('/v1/users/7')).status).toBe(404);
  });

  it('refuses a body that is not JSON, a missing content type, and other methods', async () => {
    expect((await call('/v1/users/42', { method: 'PUT', headers: asJson, body: 'nope' })).status).toBe(400);
    expect((await call('/v1/users/42', { method: 'PUT', body: '{}' })).status).toBe(415);
    expect((await call('/v1/users/42', { method: 'PATCH', headers: asJson, body: '[1]' })).status).toBe(400);
    const post = await call('/v1/users/42', { method: 'POST', headers: asJson, body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toContain('PATCH');
    expect(emu.resource('/v1/users/42')!.toString()).toBe(ITEM);
  });

  it('checks the bearer token like the collections', async () => {
    const none = await fetch(`${emu.baseUrl}/v1/users/42`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
    const bad = await fetch(`${emu.baseUrl}/v1/echo`, { method: 'POST', headers: bearer('not-a-token'), body: 'x' });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toContain('invalid_token');
    // The refused request's body is still in the log.
    expect(emu.requests.at(-1)!.body!.toString()).toBe('x');
  });

  it('echo returns method, path, query, headers and body, never the Authorization value', async () => {
    const body = Buffer.from([0x7b, 0x7d, 0x0a, 0xff, 0x00]);
    const res = await call('/v1/echo?a=1', { method: 'PATCH', headers: { 'x-tag': 't' }, body });
    const echoed = (await res.json()) as Record<string, unknown> & { headers: Record<string, string> };
    expect(echoed).toMatchObject({ method: 'PATCH', path: '/v1/echo', query: 'a=1' });
    expect(echoed.headers['x-tag']).toBe('t');
    expect(echoed.headers.authorization).toBe('(checked, not echoed)');
    expect(Buffer.from(echoed.bodyBase64 as string, 'base64')).toEqual(body);
    expect(JSON.stringify(echoed)).not.toContain(auth.authorization!.slice(7));
  });

  it('answers a chosen status, with Location on a redirect and no body on 204', async () => {
    const nf = await call('/v1/status/404');
    expect(nf.status).toBe(404);
    expect(await nf.json()).toEqual({ status: 404 });
    const moved = await call('/v1/status/302?location=https://elsewhere.example/x');
    expect(moved.status).toBe(302);
    expect(moved.headers.get('location')).toBe('https://elsewhere.example/x');
    expect((await call('/v1/status/301')).headers.get('location')).toBe(`${emu.baseUrl}/v1/echo`);
    const empty = await call('/v1/status/204', { method: 'DELETE' });
    expect(empty.status).toBe(204);
    expect(await empty.text()).toBe('');
    expect((await call('/v1/status/99')).status).toBe(400);
    expect((await call('/v1/nothing-here')).status).toBe(404);
  });

  it('unavailable is always 503 (Retry-After on request); slow waits before answering', async () => {
    const a = await call('/v1/unavailable?retryAfter=1');
    expect(a.status).toBe(503);
    expect(a.headers.get('retry-after')).toBe('1');
    expect((await call('/v1/unavailable')).headers.get('retry-after')).toBeNull();
    const started = clock.now();
    const slow = await call('/v1/slow?ms=300');
    expect(clock.now() - started).toBeGreaterThanOrEqual(300);
    expect(await slow.json()).toEqual({ slept: 300 });
    expect((await call('/v1/slow?ms=abc')).status).toBe(400);
  });

  it('upload counts a body of any size without keeping it; a client that hangs up mid-body is no error', async () => {
    const size = 3 * 1024 * 1024 + 7;
    const res = await call('/v1/upload', { method: 'POST', body: Buffer.alloc(size, 0x61) });
    expect(await res.json()).toEqual({ received: size });
    expect(emu.requests.at(-1)).toMatchObject({ received: size, status: 200 });
    expect(emu.requests.at(-1)!.body).toBeUndefined();

    const cut = request(`${emu.baseUrl}/v1/upload`, { method: 'POST', headers: auth });
    cut.on('error', () => {});
    cut.write(Buffer.alloc(64 * 1024));
    const logged = () => emu.requests[1];
    await until(() => ((logged()?.received ?? 0) >= 64 * 1024 ? true : undefined), 10_000, 'the bytes');
    cut.destroy();
    await until(() => (logged()!.status === 400 ? true : undefined), 10_000, 'the end of the upload');
  });

  it('refuses resource paths that would shadow a fixed endpoint or the OAuth ones', () => {
    expect(() => emu.setResource('/v1/echo', '{}')).toThrow();
    expect(() => emu.setResource('/oauth/x', '{}')).toThrow();
    expect(() => emu.setResource('v1/x', '{}')).toThrow();
  });
});

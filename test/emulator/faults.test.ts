import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../support/clock.js';
import { until } from '../support/until.js';
import { bearer, exchangeFields, get, getJson, href, postForm, signIn } from './helpers.js';
import { type Emulator, type EmulatorClock, startEmulator } from './index.js';
import { VirtualClock } from './virtual-clock.js';

describe('fault injection', { timeout: 30_000 }, () => {
  let emu: Emulator;
  let auth: Record<string, string>;
  let users: string;
  beforeEach(async () => {
    emu = await startEmulator();
    auth = bearer(emu.mintTokens().access_token);
    users = `${emu.baseUrl}/v1/users?pageSize=10`;
  });
  afterEach(async () => {
    expect(emu.errors).toEqual([]);
    await emu.close();
  });

  const statuses = async (n: number) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await get(users, auth)).status);
    return out;
  };

  it('status: the given status, Retry-After and headers, once, then normal service', async () => {
    emu.inject({
      path: '/v1/users',
      fault: { kind: 'status', status: 503, retryAfter: '2', headers: { 'x-fault': 'yes' } },
    });
    const res = await get(users, auth);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(res.headers.get('x-fault')).toBe('yes');
    expect(((await res.json()) as { error: string }).error).toBe('injected_fault');
    expect((await get(users, auth)).status).toBe(200);
    expect(emu.requests.map((r) => r.status)).toEqual([503, 200]);
  });

  it('params: only requests carrying those query values match, and nth counts only them', async () => {
    emu.inject({ path: '/v1/users', params: { pageIndex: '2' }, nth: 2, fault: { kind: 'status', status: 503 } });
    const at = (i: number) => `${emu.baseUrl}/v1/users?pageSize=10&pageIndex=${i}`;
    const seen: number[] = [];
    for (const i of [2, 1, 3, 2, 2]) seen.push((await get(at(i), auth)).status);
    expect(seen).toEqual([200, 200, 200, 503, 200]);
  });

  it('nth and times select which matching requests fail; other paths do not count', async () => {
    emu.inject({ path: '/v1/users', nth: 2, times: 2, fault: { kind: 'status', status: 429 } });
    expect((await get(`${emu.baseUrl}/v1/events`, auth)).status).toBe(200);
    expect(await statuses(5)).toEqual([200, 429, 429, 200, 200]);
  });

  it('times: Infinity lasts until clearFaults()', async () => {
    emu.inject({ path: '/v1/users', times: Number.POSITIVE_INFINITY, fault: { kind: 'status', status: 502 } });
    expect(await statuses(4)).toEqual([502, 502, 502, 502]);
    emu.clearFaults();
    expect(await statuses(1)).toEqual([200]);
  });

  /** Runs `test` against an emulator of its own whose waits run on `clock`, with a token and its users URL. */
  async function onClock(
    clock: EmulatorClock,
    test: (timed: Emulator, users: string, auth: Record<string, string>) => Promise<void>,
  ): Promise<void> {
    const timed = await startEmulator({ clock });
    try {
      await test(timed, `${timed.baseUrl}/v1/users?pageSize=10`, bearer(timed.mintTokens().access_token));
      expect(timed.errors).toEqual([]);
    } finally {
      await timed.close();
    }
  }

  it('forMs: every matching request gets the fault until that long after the first one did, then none', async () => {
    expect(() => emu.inject({ path: '/v1/users', times: 2, forMs: 100, fault: { kind: 'drop' } })).toThrow(/forMs/);
    const clock = new FakeClock();
    await onClock(clock, async (timed, users, auth) => {
      timed.inject({ path: '/v1/users', nth: 2, forMs: 300, fault: { kind: 'status', status: 429, retryAfter: '0' } });
      const status = async () => (await get(users, auth)).status;
      expect(await status()).toBe(200);
      // The storm begins with the first request it hits, and lasts 300 ms of the emulator's clock from then.
      expect(await status()).toBe(429);
      clock.advance(299);
      expect([await status(), await status()]).toEqual([429, 429]);
      clock.advance(1);
      expect([await status(), await status()]).toEqual([200, 200]);
    });
  });

  it('queued faults for the same request hit consecutive requests', async () => {
    emu.inject({ path: '/v1/users', fault: { kind: 'status', status: 502 } });
    emu.inject({ path: '/v1/users', fault: { kind: 'status', status: 504 } });
    expect(await statuses(3)).toEqual([502, 504, 200]);
  });

  it('path * matches every path', async () => {
    emu.inject({ path: '*', fault: { kind: 'status', status: 500 } });
    expect((await get(`${emu.baseUrl}/anything`)).status).toBe(500);
    expect((await get(`${emu.baseUrl}/anything`)).status).toBe(404);
  });

  it('drop: the socket closes without a response', async () => {
    emu.inject({ path: '/v1/users', fault: { kind: 'drop' } });
    await expect(get(users, auth)).rejects.toThrow();
    expect((await get(users, auth)).status).toBe(200);
  });

  it('latency: the response comes late but whole', async () => {
    const clock = new VirtualClock();
    await onClock(clock, async (timed, users, auth) => {
      timed.inject({ path: '/v1/users', fault: { kind: 'latency', ms: 300 } });
      const started = clock.now();
      const { status, body } = await getJson(users, auth);
      // Late by the emulator's clock, which counts the wait whatever the load on the machine.
      expect(clock.now() - started).toBeGreaterThanOrEqual(300);
      expect(status).toBe(200);
      expect(body['items']).toHaveLength(10);
    });
  });

  it('hold: the request is answered, as usual, once the promise it waits on settles', async () => {
    let release!: () => void;
    emu.inject({ path: '/v1/users', fault: { kind: 'hold', until: new Promise<void>((r) => (release = r)) } });
    let answered = false;
    const answer = getJson(users, auth).finally(() => (answered = true));
    await until(() => (emu.requests.length > 0 ? true : undefined), 10_000, 'the held request');
    // Other requests pass meanwhile; the held one is still waiting after they were answered.
    expect((await get(`${emu.baseUrl}/v1/events`, auth)).status).toBe(200);
    expect(answered).toBe(false);
    expect(emu.requests[0]!.status).toBeUndefined();
    release();
    const { status, body } = await answer;
    expect(status).toBe(200);
    expect(body['items']).toHaveLength(10);
  });

  it('body: raw replacement bodies, statuses and headers (malformed JSON, HTML, redirects)', async () => {
    emu.inject({ path: '/v1/users', fault: { kind: 'body', body: '{"items":[' } });
    const broken = await get(users, auth);
    expect(broken.status).toBe(200);
    expect(broken.headers.get('content-type')).toBe('application/json');
    expect(await broken.text()).toBe('{"items":[');
    emu.inject({ path: '/v1/users', fault: { kind: 'body', contentType: 'text/html', body: '<html>proxy</html>' } });
    expect(await (await get(users, auth)).text()).toBe('<html>proxy</html>');
    emu.inject({
      path: '/v1/users',
      fault: { kind: 'body', status: 302, body: '', headers: { location: 'https://evil.example/steal' } },
    });
    const moved = await get(users, auth);
    expect(moved.status).toBe(302);
    expect(moved.headers.get('location')).toBe('https://evil.example/steal');
  });

  it('next: replaces links.next in an otherwise normal page, even on the last page', async () => {
    emu.inject({ path: '/v1/users', fault: { kind: 'next', href: 'https://elsewhere.example/v1/users?pageIndex=1' } });
    const foreign = await getJson(users, auth);
    expect(foreign.body['items']).toHaveLength(10);
    const l = foreign.body['links'] as Record<string, unknown>;
    expect(Object.keys(l)).toEqual(['self', 'first', 'next', 'last']);
    expect(href(l['next'])).toBe('https://elsewhere.example/v1/users?pageIndex=1');
    emu.inject({ path: '/v1/users', fault: { kind: 'next', href: 42 } });
    expect((await getJson(users, auth)).body['links']).toMatchObject({ next: { href: 42 } });
    const lastUrl = `${emu.baseUrl}/v1/users?pageIndex=24&pageSize=10`;
    emu.inject({ path: '/v1/users', fault: { kind: 'next', href: users } });
    const loop = await getJson(lastUrl, auth);
    expect(href((loop.body['links'] as Record<string, unknown>)['next'])).toBe(users);
    emu.inject({ path: '/v1/users', fault: { kind: 'next', href: undefined } });
    expect((await getJson(users, auth)).body['links']).not.toHaveProperty('next');
  });

  it('drop-mid-body: headers and part of the body, then the connection is cut', async () => {
    emu.inject({ path: '/v1/users', fault: { kind: 'drop-mid-body' } });
    const res = await get(users, auth);
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    expect((await getJson(users, auth)).status).toBe(200);
  });

  it('faults on /oauth/token still log the form and the token event', async () => {
    const { code, pkce } = await signIn(emu);
    emu.inject({ path: '/oauth/token', fault: { kind: 'status', status: 503, retryAfter: '1' } });
    const res = await postForm(`${emu.baseUrl}/oauth/token`, exchangeFields(emu, code, pkce.verifier));
    expect(res.status).toBe(503);
    expect(emu.requests.at(-1)?.form?.['code']).toBe(code);
    expect(emu.tokenEvents.at(-1)).toMatchObject({ grant: 'authorization_code', ok: false, error: 'fault:status' });
    expect(emu.secrets()).toContain(pkce.verifier);
    // The code was not consumed by the failed attempt.
    expect((await postForm(`${emu.baseUrl}/oauth/token`, exchangeFields(emu, code, pkce.verifier))).status).toBe(200);
  });

  it('patch: the grant is processed as usual, then members of the JSON reply are replaced', async () => {
    const { code, pkce } = await signIn(emu);
    emu.inject({ path: '/oauth/token', fault: { kind: 'patch', fields: { expires_in: 1e300, extra: 'x' } } });
    const res = await postForm(`${emu.baseUrl}/oauth/token`, exchangeFields(emu, code, pkce.verifier));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ expires_in: 1e300, extra: 'x', token_type: 'Bearer' });
    expect(emu.secrets()).toContain(body['access_token']);
    expect(emu.tokenEvents.at(-1)).toMatchObject({ grant: 'authorization_code', ok: true });
    // The code was spent by the patched exchange; an error reply is patched the same way.
    emu.inject({ path: '/oauth/token', fault: { kind: 'patch', fields: { note: 'patched' } } });
    const again = await postForm(`${emu.baseUrl}/oauth/token`, exchangeFields(emu, code, pkce.verifier));
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: 'invalid_grant', note: 'patched' });
  });

  it('onRequest: runs as each request arrives, before its token is checked; undefined removes it', async () => {
    const seen: (number | undefined)[] = [];
    emu.onRequest((q) => {
      seen.push(q.status);
      if (seen.length === 2) emu.expireAccessTokens();
    });
    expect(await statuses(3)).toEqual([200, 401, 401]);
    // The hook saw each request before it had an answer.
    expect(seen).toEqual([undefined, undefined, undefined]);
    emu.onRequest(undefined);
    await get(users, auth);
    expect(seen).toHaveLength(3);
  });

  it('refuses malformed fault specs', () => {
    expect(() => emu.inject({ path: '/v1/users', nth: 0, fault: { kind: 'drop' } })).toThrow();
    expect(() => emu.inject({ path: '/v1/users', times: 1.5, fault: { kind: 'drop' } })).toThrow();
  });
});

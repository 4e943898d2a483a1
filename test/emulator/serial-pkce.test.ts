import { beforeEach, describe, expect, it } from 'vitest';
import {
  bearer,
  eachEmulator,
  exchangeFields,
  get,
  type PkcePair,
  pkcePair,
  refreshFields,
  signIn,
  token,
} from './helpers.js';
import { type Emulator, startEmulator } from './index.js';

describe('POST /oauth/token: Serial PKCE refresh', { timeout: 30_000 }, () => {
  let emu: Emulator;
  let now: number;
  // Each test's clock starts here: this hook runs before the emulator starts.
  beforeEach(() => {
    now = Date.UTC(2030, 0, 1);
  });
  eachEmulator(
    (e) => {
      emu = e;
    },
    { now: () => now },
  );

  /** Signs in and exchanges the code with a next challenge: the refresh token and the pair to prove next. */
  async function session(nextPair: PkcePair | null = pkcePair()) {
    const { code, pkce } = await signIn(emu);
    const res = await token(emu, exchangeFields(emu, code, pkce.verifier, nextPair ?? undefined));
    expect(res.status).toBe(200);
    return { refresh: String(res.body['refresh_token']), access: String(res.body['access_token']), pair: nextPair };
  }

  const users = (access: string) => get(`${emu.baseUrl}/v1/users`, bearer(access));

  it('chains a code exchange and three refreshes, each proving the previous verifier', async () => {
    let { refresh, pair } = await session();
    for (let i = 0; i < 3; i++) {
      const next = pkcePair();
      const res = await token(emu, refreshFields(emu, refresh, (pair as PkcePair).verifier, next));
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.body['refresh_token']).not.toBe(refresh);
      expect((await users(String(res.body['access_token']))).status).toBe(200);
      refresh = String(res.body['refresh_token']);
      pair = next;
    }
    expect(emu.tokenEvents.map((e) => `${e.grant}:${e.ok}`)).toEqual([
      'authorization_code:true',
      'refresh_token:true',
      'refresh_token:true',
      'refresh_token:true',
    ]);
  });

  it('refuses a verifier that is not the one of the previous request, without spending the token', async () => {
    const { refresh, pair } = await session();
    const stale = pkcePair();
    const wrong = await token(emu, refreshFields(emu, refresh, stale.verifier, pkcePair()));
    expect(wrong.status).toBe(400);
    expect(wrong.body['error']).toBe('invalid_grant');
    expect((await token(emu, refreshFields(emu, refresh, (pair as PkcePair).verifier, pkcePair()))).status).toBe(200);
  });

  it('requires code_verifier, a new code_challenge and code_challenge_method=S256', async () => {
    const { refresh, pair } = await session();
    const good = refreshFields(emu, refresh, (pair as PkcePair).verifier, pkcePair());
    for (const [name, value] of [
      ['code_verifier', ''],
      ['code_challenge', ''],
      ['code_challenge_method', ''],
      ['code_challenge_method', 'plain'],
      ['refresh_token', ''],
    ]) {
      const res = await token(emu, { ...good, [name as string]: value as string });
      expect(res.body['error']).toBe('invalid_request');
    }
    expect((await token(emu, good)).status).toBe(200);
  });

  it('refuses to refresh when the previous token request sent no challenge', async () => {
    const { refresh } = await session(null);
    expect(emu.requests.at(-1)?.form).not.toHaveProperty('code_challenge');
    // Even a verifier that would match something cannot prove a challenge that was never sent.
    const res = await token(emu, refreshFields(emu, refresh, pkcePair().verifier, pkcePair()));
    expect(res.status).toBe(400);
    expect(res.body['error']).toBe('invalid_grant');
  });

  it('refuses a refresh token of another client', async () => {
    const { refresh, pair } = await session();
    const other = emu.registerClient({ name: 'other-app', callbackUrl: 'http://127.0.0.1:9/cb' });
    const fields = { ...refreshFields(emu, refresh, (pair as PkcePair).verifier, pkcePair()), client_id: other.id };
    expect((await token(emu, fields)).body['error']).toBe('invalid_grant');
  });

  it('detects reuse of a spent refresh token and revokes the whole family', async () => {
    const { refresh: r1, pair: p1 } = await session();
    const p2 = pkcePair();
    const second = await token(emu, refreshFields(emu, r1, (p1 as PkcePair).verifier, p2));
    expect(second.status).toBe(200);
    const r2 = String(second.body['refresh_token']);
    const a2 = String(second.body['access_token']);
    // r1 again, even with a verifier that would be right: reuse.
    const replay = await token(emu, refreshFields(emu, r1, p2.verifier, pkcePair()));
    expect(replay.status).toBe(400);
    expect(replay.body['error']).toBe('invalid_grant');
    expect(emu.tokenEvents.at(-1)).toMatchObject({
      grant: 'refresh_token',
      ok: false,
      error: 'invalid_grant',
      reuse: true,
    });
    expect((await users(a2)).status).toBe(401);
    expect((await token(emu, refreshFields(emu, r2, p2.verifier, pkcePair()))).body['error']).toBe('invalid_grant');
  });

  it('omits the new refresh token when refreshTokenOnRefresh is false; the spent one stays spent', async () => {
    const once = await startEmulator({ refreshTokenOnRefresh: false });
    try {
      const pair = pkcePair();
      const { code, pkce } = await signIn(once);
      const first = await token(once, exchangeFields(once, code, pkce.verifier, pair));
      const refresh = String(first.body['refresh_token']);
      const next = pkcePair();
      const res = await token(once, refreshFields(once, refresh, pair.verifier, next));
      expect(res.status).toBe(200);
      expect('refresh_token' in res.body).toBe(false);
      const again = await token(once, refreshFields(once, refresh, next.verifier, pkcePair()));
      expect(again.body['error']).toBe('invalid_grant');
    } finally {
      await once.close();
    }
  });

  it('lets a refresh narrow the scope but not widen it (RFC 6749 §6)', async () => {
    const { refresh, pair } = await session();
    const next = pkcePair();
    const wide = await token(emu, {
      ...refreshFields(emu, refresh, (pair as PkcePair).verifier, next),
      scope: 'openid admin',
    });
    expect(wide.body['error']).toBe('invalid_scope');
    const narrow = await token(emu, {
      ...refreshFields(emu, refresh, (pair as PkcePair).verifier, next),
      scope: 'openid',
    });
    expect(narrow.status).toBe(200);
    expect(narrow.body['scope']).toBe('openid');
  });

  it('expires access tokens by the clock: RFC 6750 401 with error="invalid_token"', async () => {
    const { access } = await session();
    now += 3599_000;
    expect((await users(access)).status).toBe(200);
    now += 1000;
    const res = await users(access);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
  });

  it('expireAccessTokens() and revokeAll()', async () => {
    const { refresh, pair, access } = await session();
    emu.expireAccessTokens();
    expect((await users(access)).status).toBe(401);
    const next = pkcePair();
    const res = await token(emu, refreshFields(emu, refresh, (pair as PkcePair).verifier, next));
    expect(res.status).toBe(200);
    expect((await users(String(res.body['access_token']))).status).toBe(200);
    emu.revokeAll();
    expect((await users(String(res.body['access_token']))).status).toBe(401);
    const after = await token(emu, refreshFields(emu, String(res.body['refresh_token']), next.verifier, pkcePair()));
    expect(after.body['error']).toBe('invalid_grant');
  });

  it('mintTokens() gives a signed-in state whose first refresh proves the given challenge', async () => {
    const pair = pkcePair();
    const minted = emu.mintTokens({ nextChallenge: pair.challenge });
    expect((await users(minted.access_token)).status).toBe(200);
    const res = await token(emu, refreshFields(emu, String(minted.refresh_token), pair.verifier, pkcePair()));
    expect(res.status).toBe(200);
  });
});

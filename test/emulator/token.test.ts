import { beforeEach, describe, expect, it } from 'vitest';
import { bearer, eachEmulator, exchangeFields, get, pkcePair, postForm, signIn, token } from './helpers.js';
import { CODE_TTL_MS, type Emulator, s256, startEmulator } from './index.js';

describe('POST /oauth/token: authorization code exchange', { timeout: 30_000 }, () => {
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

  async function expectError(fields: Record<string, string> | string, error: string, status = 400, headers = {}) {
    const res = await token(emu, fields, headers);
    expect(res.status).toBe(status);
    expect(res.body['error']).toBe(error);
    expect(typeof res.body['error_description']).toBe('string');
    expect(res.headers.get('cache-control')).toBe('no-store');
    // Error descriptions reach users: never a secret in them.
    for (const s of emu.secrets()) expect(String(res.body['error_description'])).not.toContain(s);
    return res;
  }

  it('exchanges a code for the token response, no-store, with a signed id_token', async () => {
    const { code, pkce } = await signIn(emu);
    const res = await token(emu, exchangeFields(emu, code, pkce.verifier, pkcePair()));
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual([
      'access_token',
      'token_type',
      'expires_in',
      'refresh_token',
      'id_token',
      'scope',
    ]);
    expect(res.body['token_type']).toBe('Bearer');
    expect(res.body['expires_in']).toBe(3600);
    expect(res.body['scope']).toBe('openid idcli-test');
    expect(res.body['access_token']).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(res.body['refresh_token']).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    const claims = emu.verifyIdToken(String(res.body['id_token']));
    expect(claims).toMatchObject({
      iss: emu.baseUrl,
      aud: emu.client.id,
      name: 'Alice Example',
      email: 'alice@example.com',
      iat: now / 1000,
      exp: now / 1000 + 3600,
    });
    expect(typeof claims?.['sub']).toBe('string');
    expect(emu.verifyIdToken(`${String(res.body['id_token'])}x`)).toBeNull();
    expect(emu.tokenEvents).toEqual([{ grant: 'authorization_code', ok: true, time: now }]);
    expect((await get(`${emu.baseUrl}/v1/users`, bearer(String(res.body['access_token'])))).status).toBe(200);
  });

  it('requires Content-Type application/x-www-form-urlencoded', async () => {
    const { code, pkce } = await signIn(emu);
    const fields = exchangeFields(emu, code, pkce.verifier);
    for (const type of ['application/json', 'text/plain', 'multipart/form-data; boundary=x']) {
      await expectError(new URLSearchParams(fields).toString(), 'invalid_request', 400, { 'content-type': type });
    }
    const ok = await token(emu, fields, { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' });
    expect(ok.status).toBe(200);
  });

  it('refuses client authentication of any kind: this is a public client', async () => {
    const { code, pkce } = await signIn(emu);
    const fields = exchangeFields(emu, code, pkce.verifier);
    await expectError({ ...fields, client_secret: emu.client.secret }, 'invalid_request');
    const basic = Buffer.from(`${emu.client.id}:${emu.client.secret}`).toString('base64');
    await expectError(fields, 'invalid_request', 400, { authorization: `Basic ${basic}` });
    expect((await token(emu, fields)).status).toBe(200);
  });

  it('refuses duplicated parameters (RFC 6749 §3.2)', async () => {
    const { code, pkce } = await signIn(emu);
    const fields = exchangeFields(emu, code, pkce.verifier);
    const body = `${new URLSearchParams(fields).toString()}&code=${code}`;
    await expectError(body, 'invalid_request');
    // An empty parameter counts as absent (RFC 6749 §3.1), so it is no duplicate.
    expect((await token(emu, `${new URLSearchParams(fields).toString()}&code=`)).status).toBe(200);
  });

  it('checks grant_type and client_id', async () => {
    const { code, pkce } = await signIn(emu);
    const fields = exchangeFields(emu, code, pkce.verifier);
    await expectError({ ...fields, grant_type: '' }, 'invalid_request');
    await expectError({ ...fields, grant_type: 'password' }, 'unsupported_grant_type');
    await expectError({ ...fields, client_id: '' }, 'invalid_request');
    await expectError({ ...fields, client_id: crypto.randomUUID() }, 'invalid_client', 401);
    expect((await token(emu, fields)).status).toBe(200);
  });

  it('requires code, redirect_uri and code_verifier', async () => {
    const { code, pkce } = await signIn(emu);
    const fields = exchangeFields(emu, code, pkce.verifier);
    for (const name of ['code', 'redirect_uri', 'code_verifier']) {
      await expectError({ ...fields, [name]: '' }, 'invalid_request');
    }
    expect((await token(emu, fields)).status).toBe(200);
  });

  it('refuses an unknown code, another client, another redirect_uri and a wrong verifier', async () => {
    const { code, pkce } = await signIn(emu);
    const fields = exchangeFields(emu, code, pkce.verifier);
    await expectError({ ...fields, code: 'unknown-code' }, 'invalid_grant');
    const other = emu.registerClient({ name: 'other-app', callbackUrl: emu.client.callbackUrl });
    await expectError({ ...fields, client_id: other.id }, 'invalid_grant');
    await expectError({ ...fields, redirect_uri: `${emu.client.callbackUrl}/` }, 'invalid_grant');
    await expectError({ ...fields, code_verifier: pkcePair().verifier }, 'invalid_grant');
    // None of those spent the code.
    expect((await token(emu, fields)).status).toBe(200);
  });

  it('checks the verifier format: 43 to 128 unreserved characters (RFC 7636 §4.1)', async () => {
    for (const [verifier, ok] of [
      ['a'.repeat(42), false],
      ['a'.repeat(129), false],
      [`${'a'.repeat(42)}!`, false],
      [`${'a'.repeat(42)} `, false],
      ['a'.repeat(43), true],
      [`${'Az09-._~'.repeat(16)}`, true],
    ] as const) {
      const code = emu.createAuthorizationCode({ challenge: s256(verifier) });
      const res = await token(emu, exchangeFields(emu, code, verifier));
      if (ok) expect(res.status).toBe(200);
      else expect(res.body['error']).toBe('invalid_request');
    }
  });

  it('expires codes after 10 minutes by the injected clock', async () => {
    const start = now;
    const a = await signIn(emu);
    const b = await signIn(emu);
    now = start + CODE_TTL_MS - 1000;
    expect((await token(emu, exchangeFields(emu, a.code, a.pkce.verifier))).status).toBe(200);
    now = start + CODE_TTL_MS;
    await expectError(exchangeFields(emu, b.code, b.pkce.verifier), 'invalid_grant');
  });

  it('refuses a code used twice and revokes what it issued (RFC 6749 §4.1.2)', async () => {
    const { code, pkce } = await signIn(emu);
    const fields = exchangeFields(emu, code, pkce.verifier, pkcePair());
    const first = await token(emu, fields);
    expect(first.status).toBe(200);
    const access = String(first.body['access_token']);
    expect((await get(`${emu.baseUrl}/v1/users`, bearer(access))).status).toBe(200);
    await expectError(fields, 'invalid_grant');
    expect(emu.tokenEvents.at(-1)).toMatchObject({
      grant: 'authorization_code',
      ok: false,
      error: 'invalid_grant',
      reuse: true,
    });
    const after = await get(`${emu.baseUrl}/v1/users`, bearer(access));
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('validates the optional next challenge: both parameters, S256, well formed', async () => {
    const next = pkcePair();
    const attempt = async (extra: Record<string, string>, error: string | null) => {
      const { code, pkce } = await signIn(emu);
      const fields = { ...exchangeFields(emu, code, pkce.verifier), ...extra };
      if (error) await expectError(fields, error);
      else expect((await token(emu, fields)).status).toBe(200);
    };
    await attempt({ code_challenge: next.challenge }, 'invalid_request');
    await attempt({ code_challenge_method: 'S256' }, 'invalid_request');
    await attempt({ code_challenge: next.challenge, code_challenge_method: 'plain' }, 'invalid_request');
    await attempt({ code_challenge: next.verifier, code_challenge_method: 'S256' }, 'invalid_request');
    await attempt({ code_challenge: next.challenge, code_challenge_method: 'S256' }, null);
  });

  it('answers JSON only: an Accept that excludes it gets 406', async () => {
    const { code, pkce } = await signIn(emu);
    const fields = exchangeFields(emu, code, pkce.verifier);
    await expectError(fields, 'invalid_request', 406, { accept: 'text/html' });
    expect((await token(emu, fields, { accept: 'text/html, application/json;q=0.5' })).status).toBe(200);
  });

  it('answers 405 to GET', async () => {
    const res = await get(`${emu.baseUrl}/oauth/token`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('honours accessTokenTtl and issueRefreshTokens=false', async () => {
    const short = await startEmulator({ accessTokenTtl: 120, issueRefreshTokens: false });
    try {
      const { code, pkce } = await signIn(short);
      const res = await token(short, exchangeFields(short, code, pkce.verifier, pkcePair()));
      expect(res.body['expires_in']).toBe(120);
      expect('refresh_token' in res.body).toBe(false);
    } finally {
      await short.close();
    }
  });

  it('logs the form and remembers every secret for leak tests', async () => {
    const { code, pkce } = await signIn(emu);
    const res = await postForm(`${emu.baseUrl}/oauth/token`, exchangeFields(emu, code, pkce.verifier, pkcePair()));
    const body = (await res.json()) as Record<string, string>;
    const logged = emu.requests.find((r) => r.path === '/oauth/token');
    expect(logged?.form).toMatchObject({ grant_type: 'authorization_code', code, code_verifier: pkce.verifier });
    expect(logged?.status).toBe(200);
    const secrets = emu.secrets();
    for (const s of [code, pkce.verifier, body['access_token'], body['refresh_token'], body['id_token']]) {
      expect(secrets).toContain(s);
    }
  });
});

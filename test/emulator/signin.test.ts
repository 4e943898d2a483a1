import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  authorizeUrl,
  exchangeFields,
  get,
  locationQuery,
  pkcePair,
  postForm,
  signIn,
  token,
  txOf,
} from './helpers.js';
import { type Emulator, SSO_COOKIE, startEmulator } from './index.js';

describe('sign-in and sign-up forms', { timeout: 30_000 }, () => {
  let emu: Emulator;
  beforeEach(async () => {
    emu = await startEmulator();
  });
  afterEach(async () => {
    expect(emu.errors).toEqual([]);
    await emu.close();
  });

  const login = (fields: Record<string, string>) => postForm(`${emu.baseUrl}/oauth/login`, fields);
  async function openForm(overrides: Record<string, string | undefined> = {}) {
    const res = await get(authorizeUrl(emu, pkcePair().challenge, overrides));
    expect(res.status).toBe(200);
    return txOf(await res.text());
  }

  it('signs in through the real form: HttpOnly SSO cookie and a 302 with code and state', async () => {
    const tx = await openForm({ state: 'keep me' });
    const res = await login({ tx, email: emu.user.email, password: emu.user.password, action: 'login' });
    expect(res.status).toBe(302);
    const location = res.headers.get('location') ?? '';
    expect(location.startsWith(`${emu.client.callbackUrl}?code=`)).toBe(true);
    const q = locationQuery(res);
    expect(q.get('code')).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(q.get('state')).toBe('keep me');
    expect(q.has('iss')).toBe(false);
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(new RegExp(`^${SSO_COOKIE}=[A-Za-z0-9_-]+;`));
    expect(cookie).toMatch(/;\s*HttpOnly/i);
  });

  it('adds iss to the code redirect when sendIss is on', async () => {
    const withIss = await startEmulator({ sendIss: true });
    try {
      const { location } = await signIn(withIss);
      expect(new URL(location).searchParams.get('iss')).toBe(withIss.baseUrl);
    } finally {
      await withIss.close();
    }
  });

  it('shows the form again with an error on a wrong password, then accepts the right one', async () => {
    const tx = await openForm({ ui_locales: 'fr' });
    const wrong = await login({ tx, email: emu.user.email, password: 'nope', action: 'login' });
    expect(wrong.status).toBe(200);
    expect(wrong.headers.get('location')).toBeNull();
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const html = await wrong.text();
    expect(html).toContain('role="alert"');
    expect(html).toContain('mot de passe incorrect');
    expect(html).toContain(`value="${emu.user.email}"`);
    const unknown = await login({ tx, email: 'mallory@example.com', password: emu.user.password, action: 'login' });
    expect(unknown.status).toBe(200);
    const right = await login({ tx, email: emu.user.email, password: emu.user.password, action: 'login' });
    expect(right.status).toBe(302);
    expect(locationQuery(right).get('code')).toBeTruthy();
  });

  it('answers Cancel with access_denied and the state', async () => {
    const tx = await openForm();
    const res = await login({ tx, email: '', password: '', action: 'cancel' });
    expect(res.status).toBe(302);
    const q = locationQuery(res);
    expect(q.get('error')).toBe('access_denied');
    expect(q.get('state')).toBe('st-123');
    expect(q.get('code')).toBeNull();
  });

  it('refuses an unknown or already used transaction, and a body that is not a form', async () => {
    expect((await login({ tx: 'forged', email: emu.user.email, password: emu.user.password })).status).toBe(400);
    const tx = await openForm();
    expect((await login({ tx, email: emu.user.email, password: emu.user.password })).status).toBe(302);
    const again = await login({ tx, email: emu.user.email, password: emu.user.password });
    expect(again.status).toBe(400);
    expect(again.headers.get('location')).toBeNull();
    const tx2 = await openForm();
    const asJson = await fetch(`${emu.baseUrl}/oauth/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tx: tx2, email: emu.user.email, password: emu.user.password }),
    });
    expect(asJson.status).toBe(400);
    expect((await get(`${emu.baseUrl}/oauth/login`)).status).toBe(405);
  });

  it('uses the SSO session: no prompt redirects at once, prompt=login shows the form, prompt=none gets a code', async () => {
    const { cookie } = await signIn(emu);
    const { challenge } = pkcePair();
    const silent = await get(authorizeUrl(emu, challenge), { cookie });
    expect(silent.status).toBe(302);
    expect(locationQuery(silent).get('code')).toBeTruthy();
    expect(locationQuery(silent).get('state')).toBe('st-123');
    const forced = await get(authorizeUrl(emu, challenge, { prompt: 'login' }), { cookie });
    expect(forced.status).toBe(200);
    expect(await forced.text()).toContain('type="password"');
    const none = await get(authorizeUrl(emu, challenge, { prompt: 'none' }), { cookie });
    expect(none.status).toBe(302);
    expect(locationQuery(none).get('code')).toBeTruthy();
    // Without the cookie, or with a forged one, prompt=none cannot sign in.
    for (const c of [undefined, `${SSO_COOKIE}=forged`]) {
      const refused = await get(authorizeUrl(emu, challenge, { prompt: 'none' }), c ? { cookie: c } : {});
      expect(locationQuery(refused).get('error')).toBe('login_required');
      expect(locationQuery(refused).get('state')).toBe('st-123');
    }
  });

  it('prompt=create shows a sign-up form that creates the user and proceeds as a sign-in', async () => {
    const pkce = pkcePair();
    const page = await get(authorizeUrl(emu, pkce.challenge, { prompt: 'create', login_hint: 'carol@example.com' }));
    const html = await page.text();
    expect(html).toContain('action="/oauth/signup"');
    expect(html).toContain('value="carol@example.com"');
    expect(html).toContain('name="name"');
    expect(html).toContain('value="signup"');
    const tx = txOf(html);
    const signup = (fields: Record<string, string>) => postForm(`${emu.baseUrl}/oauth/signup`, { tx, ...fields });
    const short = await signup({ email: 'carol@example.com', name: 'Carol', password: 'short', action: 'signup' });
    expect(short.status).toBe(200);
    expect(await short.text()).toContain('role="alert"');
    const taken = await signup({ email: emu.user.email, name: 'Carol', password: 'long enough pw', action: 'signup' });
    expect(await taken.text()).toContain('already exists');
    const ok = await signup({
      email: 'carol@example.com',
      name: 'Carol Created',
      password: 'long enough pw',
      action: 'signup',
    });
    expect(ok.status).toBe(302);
    expect(ok.headers.get('set-cookie')).toMatch(/HttpOnly/i);
    const code = locationQuery(ok).get('code') ?? '';
    const tokens = await token(emu, exchangeFields(emu, code, pkce.verifier));
    expect(tokens.status).toBe(200);
    const claims = emu.verifyIdToken(String(tokens.body['id_token']));
    expect(claims?.['email']).toBe('carol@example.com');
    expect(claims?.['name']).toBe('Carol Created');
    // The new account can now sign in with the ordinary form.
    const tx2 = await openForm();
    expect(
      (await login({ tx: tx2, email: 'carol@example.com', password: 'long enough pw', action: 'login' })).status,
    ).toBe(302);
  });
});

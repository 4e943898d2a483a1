import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { authorizeUrl, get, locationQuery, pkcePair } from './helpers.js';
import { type Emulator, startEmulator } from './index.js';

describe('GET /oauth/authorize', { timeout: 30_000 }, () => {
  let emu: Emulator;
  const { challenge } = pkcePair();
  beforeEach(async () => {
    emu = await startEmulator();
  });
  afterEach(async () => {
    expect(emu.errors).toEqual([]);
    await emu.close();
  });

  /** An error page: 400 HTML, and never a redirect (RFC 6749 §4.1.2.1). */
  async function expectErrorPage(url: string) {
    const res = await get(url);
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    return res.text();
  }

  async function expectErrorRedirect(url: string, error: string) {
    const res = await get(url);
    expect(res.status).toBe(302);
    const location = res.headers.get('location') ?? '';
    expect(location.startsWith(`${emu.client.callbackUrl}?`)).toBe(true);
    const q = locationQuery(res);
    expect(q.get('error')).toBe(error);
    expect(q.get('error_description')).toBeTruthy();
    expect(q.get('code')).toBeNull();
    return q;
  }

  it('shows the sign-in form for a valid request', async () => {
    const res = await get(authorizeUrl(emu, challenge));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toMatch(/<form [^>]*method="post"[^>]*enctype="application\/x-www-form-urlencoded"/);
    expect(html).toContain('name="email"');
    expect(html).toContain('type="password"');
    expect(html).toMatch(/<input type="hidden" name="tx" value="[A-Za-z0-9_-]{43}">/);
    expect(html).toContain('<button type="submit" name="action" value="login">');
    expect(html).toContain('<button type="submit" name="action" value="cancel" formnovalidate>');
  });

  it('refuses an unknown, missing, malformed or duplicated client_id with an error page', async () => {
    await expectErrorPage(authorizeUrl(emu, challenge, { client_id: crypto.randomUUID() }));
    await expectErrorPage(authorizeUrl(emu, challenge, { client_id: undefined }));
    await expectErrorPage(authorizeUrl(emu, challenge, { client_id: 'idcli-test' }));
    await expectErrorPage(`${authorizeUrl(emu, challenge)}&client_id=${emu.client.id}`);
  });

  it('accepts only the registered redirect_uri, byte for byte', async () => {
    const registered = emu.client.callbackUrl; // http://127.0.0.1:8765/callback
    for (const other of [
      `${registered}/`,
      'http://127.0.0.1:8766/callback',
      'http://localhost:8765/callback',
      'http://127.0.0.1:8765/Callback',
      `${registered}?x=1`,
      'HTTP://127.0.0.1:8765/callback',
    ]) {
      await expectErrorPage(authorizeUrl(emu, challenge, { redirect_uri: other }));
    }
    await expectErrorPage(authorizeUrl(emu, challenge, { redirect_uri: undefined }));
    expect((await get(authorizeUrl(emu, challenge, { redirect_uri: registered }))).status).toBe(200);
  });

  it('accepts any loopback port for a loopbackAnyPort client, the rest identical (RFC 8252 §7.3)', async () => {
    const v4 = emu.registerClient({ name: 'cli-v4', callbackUrl: 'http://127.0.0.1/cb', loopbackAnyPort: true });
    const v6 = emu.registerClient({ name: 'cli-v6', callbackUrl: 'http://[::1]:9000/cb', loopbackAnyPort: true });
    const url = (c: typeof v4, redirect: string) =>
      authorizeUrl(emu, challenge, { client_id: c.id, scope: `openid ${c.name}`, redirect_uri: redirect });
    expect((await get(url(v4, 'http://127.0.0.1:53124/cb'))).status).toBe(200);
    expect((await get(url(v6, 'http://[::1]:41000/cb'))).status).toBe(200);
    for (const bad of [
      'http://127.0.0.1:0/cb',
      'http://127.0.0.1:70000/cb',
      'http://127.0.0.1:53124/cb2',
      'http://localhost:53124/cb',
      'https://127.0.0.1:53124/cb',
      'http://127.0.0.1:53124/cb?x=1',
    ]) {
      await expectErrorPage(url(v4, bad));
    }
  });

  it('sends later errors to the callback with error, error_description and the state', async () => {
    const q = await expectErrorRedirect(
      authorizeUrl(emu, challenge, { response_type: 'token' }),
      'unsupported_response_type',
    );
    expect(q.get('state')).toBe('st-123');
    expect(q.get('iss')).toBeNull();
  });

  it('requires response_type=code', async () => {
    await expectErrorRedirect(authorizeUrl(emu, challenge, { response_type: undefined }), 'invalid_request');
    expect((await get(authorizeUrl(emu, challenge, { response_type: 'code' }))).status).toBe(200);
  });

  it('requires a scope of single-space-separated tokens with openid and the client name', async () => {
    for (const scope of [
      undefined,
      'idcli-test',
      'openid',
      'openid  idcli-test',
      ' openid idcli-test',
      'openid,idcli-test',
    ]) {
      await expectErrorRedirect(authorizeUrl(emu, challenge, { scope }), 'invalid_scope');
    }
    expect((await get(authorizeUrl(emu, challenge, { scope: 'email idcli-test openid' }))).status).toBe(200);
  });

  it('requires an S256 code_challenge of 43 base64url characters', async () => {
    await expectErrorRedirect(authorizeUrl(emu, challenge, { code_challenge: undefined }), 'invalid_request');
    await expectErrorRedirect(authorizeUrl(emu, challenge, { code_challenge: challenge.slice(1) }), 'invalid_request');
    await expectErrorRedirect(authorizeUrl(emu, challenge, { code_challenge: `${challenge}A` }), 'invalid_request');
    await expectErrorRedirect(
      authorizeUrl(emu, challenge, { code_challenge: `${'a'.repeat(42)}+` }),
      'invalid_request',
    );
    // 43 characters but not a canonical encoding of 32 bytes: the last character carries 2 spare bits.
    await expectErrorRedirect(
      authorizeUrl(emu, challenge, { code_challenge: `${'A'.repeat(42)}B` }),
      'invalid_request',
    );
    expect((await get(authorizeUrl(emu, challenge, { code_challenge: `${'A'.repeat(42)}E` }))).status).toBe(200);
  });

  it('refuses the plain method and a missing method', async () => {
    await expectErrorRedirect(authorizeUrl(emu, challenge, { code_challenge_method: 'plain' }), 'invalid_request');
    await expectErrorRedirect(authorizeUrl(emu, challenge, { code_challenge_method: 's256' }), 'invalid_request');
    await expectErrorRedirect(authorizeUrl(emu, challenge, { code_challenge_method: undefined }), 'invalid_request');
  });

  it('accepts prompt none, login, create and refuses anything else', async () => {
    await expectErrorRedirect(authorizeUrl(emu, challenge, { prompt: 'consent' }), 'invalid_request');
    await expectErrorRedirect(authorizeUrl(emu, challenge, { prompt: 'login consent' }), 'invalid_request');
    expect((await get(authorizeUrl(emu, challenge, { prompt: 'login' }))).status).toBe(200);
    expect((await get(authorizeUrl(emu, challenge, { prompt: 'create' }))).status).toBe(200);
    await expectErrorRedirect(authorizeUrl(emu, challenge, { prompt: 'none' }), 'login_required');
  });

  it('refuses a duplicated parameter (RFC 6749 §3.1)', async () => {
    await expectErrorRedirect(`${authorizeUrl(emu, challenge)}&scope=openid`, 'invalid_request');
    await expectErrorPage(`${authorizeUrl(emu, challenge)}&redirect_uri=${encodeURIComponent(emu.client.callbackUrl)}`);
  });

  it('returns the state unchanged, and none when none was sent', async () => {
    const odd = 'a b+c/=&ü%20"<>';
    const q = await expectErrorRedirect(authorizeUrl(emu, challenge, { state: odd, prompt: 'none' }), 'login_required');
    expect(q.get('state')).toBe(odd);
    const q2 = await expectErrorRedirect(
      authorizeUrl(emu, challenge, { state: undefined, prompt: 'none' }),
      'login_required',
    );
    expect(q2.has('state')).toBe(false);
  });

  it('pre-fills the email from login_hint, escaped', async () => {
    const html = await (await get(authorizeUrl(emu, challenge, { login_hint: 'bob@example.com' }))).text();
    expect(html).toContain('name="email" type="email" autocomplete="username" required value="bob@example.com"');
    const evil = await (await get(authorizeUrl(emu, challenge, { login_hint: '"><script>x</script>' }))).text();
    expect(evil).not.toContain('<script>');
    expect(evil).toContain('value="&quot;&gt;&lt;script&gt;x&lt;/script&gt;"');
  });

  it('chooses the page language from ui_locales: the first supported tag wins', async () => {
    const page = async (ui_locales: string | undefined) =>
      (await get(authorizeUrl(emu, challenge, { ui_locales }))).text();
    const fr = await page('fr-CA en');
    expect(fr).toContain('<html lang="fr">');
    expect(fr).toContain('Mot de passe');
    expect(fr).toContain('Se connecter');
    expect(fr).toContain('Annuler');
    expect(await page('de fr')).toContain('<html lang="fr">');
    const en = await page('en-GB fr');
    expect(en).toContain('<html lang="en">');
    expect(en).toContain('Password');
    expect(await page('de')).toContain('<html lang="en">');
    expect(await page(undefined)).toContain('<html lang="en">');
    const errorFr = await expectErrorPage(
      authorizeUrl(emu, challenge, { ui_locales: 'fr', client_id: crypto.randomUUID() }),
    );
    expect(errorFr).toContain('<html lang="fr">');
  });

  it('adds iss to error redirects when sendIss is on (RFC 9207)', async () => {
    const withIss = await startEmulator({ sendIss: true });
    try {
      const res = await get(authorizeUrl(withIss, challenge, { prompt: 'none' }));
      expect(locationQuery(res).get('iss')).toBe(withIss.baseUrl);
    } finally {
      await withIss.close();
    }
  });

  it('answers 405 to other methods', async () => {
    const res = await fetch(authorizeUrl(emu, challenge), { method: 'POST', redirect: 'manual' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
  });
});

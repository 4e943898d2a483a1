/**
 * `idcli login`, `token`, `status` and `logout` against the strict emulator, with the HTTP "browser" following the
 * emulator's real redirects and forms. Each command runs in process, its timeouts on a clock the test moves; under
 * IDCLI_TEST_EXE each runs the single executable instead (test/support/cli.ts), on the machine's clock. What only a
 * process shows (Ctrl-C) is in test/e2e/login.test.ts.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  authorizeQueries,
  authorizeUrlIn,
  browse,
  expectNoSecrets,
  type Harness,
  harness,
  login,
  tokenForms,
} from '../../support/harness.js';
import { type CliResult, EXE } from '../../support/cli.js';
import { FakeClock } from '../../support/clock.js';
import { until } from '../../support/until.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The single executable is tested by running it; otherwise a command runs in process. */
const HOW = EXE === undefined ? 'command' : 'run';

function run(args: string[], extra?: Record<string, string | undefined>): Promise<CliResult> {
  return h![HOW](args, extra);
}

/**
 * `login` with the browser `extra` names and `--timeout <seconds>`, which must run out: in process the test moves the
 * run's clock to it and the result says how far the clock went; the executable waits it out on the machine's clock.
 */
async function loginTimingOut(
  seconds: number,
  extra: Record<string, string | undefined>,
): Promise<CliResult & { elapsedMs: number }> {
  const args = ['login', '--timeout', String(seconds)];
  if (HOW === 'run') {
    const started = Date.now();
    const r = await h!.run(args, extra);
    return { ...r, elapsedMs: Date.now() - started };
  }
  const clock = new FakeClock();
  const started = clock.now();
  const [r] = await Promise.all([
    h!.command(args, extra, { clock }),
    clock.elapse(seconds * 1000, 'the sign-in timeout'),
  ]);
  return { ...r, elapsedMs: clock.now() - started };
}

describe('login → token → refresh', () => {
  it('signs in through the browser, then serves and refreshes tokens with Serial PKCE', async () => {
    h = await harness();
    const r = await login(h, [], {}, HOW);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /Signed in as Alice Example <alice@example\.com> \(profile default; credentials in file .+\)/,
    );

    // The authorize request: S256 challenge, state, openid + client name, the port actually bound.
    const [q] = authorizeQueries(h.emu);
    expect(q?.get('code_challenge_method')).toBe('S256');
    expect(q?.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q?.get('state')).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    expect(q?.get('scope')).toBe(`openid ${h.emu.client.name}`);
    expect(q?.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*\/callback$/);
    expect(q?.has('ui_locales')).toBe(false); // LANG=C.UTF-8 names no language

    // The exchange: same redirect_uri, the verifier, a NEW challenge, never a secret.
    const [exchange] = tokenForms(h.emu);
    expect(exchange).toMatchObject({
      grant_type: 'authorization_code',
      client_id: h.emu.client.id,
      redirect_uri: q?.get('redirect_uri'),
    });
    expect(exchange?.code_challenge).not.toBe(q?.get('code_challenge'));
    expect(exchange?.code_challenge_method).toBe('S256');
    expect(exchange).not.toHaveProperty('client_secret');
    const exchangeRequest = h.emu.requests.find((x) => x.path === '/oauth/token');
    expect(exchangeRequest?.headers.accept).toBe('application/json');
    expect(exchangeRequest?.headers.authorization).toBeUndefined();

    const stored = await h.record();
    expect(stored).toMatchObject({ version: 1, generation: 1, scope: `openid ${h.emu.client.name}` });
    expect(stored?.refreshToken).toBeTruthy();
    expect(stored?.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);

    // A cached token: no request.
    const cached = await run(['token']);
    expect(cached.code).toBe(0);
    expect(cached.stdout).toBe(`${stored?.accessToken}\n`);
    expect(h.emu.tokenEvents).toHaveLength(1);

    // Three forced refreshes in a row, each accepted by the strict emulator.
    const printed = new Set<string>([cached.stdout.trim()]);
    for (let i = 1; i <= 3; i++) {
      const rr = await run(['token', '--refresh']);
      expect(rr.code, rr.stderr).toBe(0);
      expect(rr.stderr).toBe('');
      printed.add(rr.stdout.trim());
      const rec = await h.record();
      expect(rec?.generation).toBe(1 + i);
      expect(rr.stdout).toBe(`${rec?.accessToken}\n`);
    }
    expect(printed.size).toBe(4);
    expect(h.emu.tokenEvents.map((e) => [e.grant, e.ok, e.reuse ?? false])).toEqual([
      ['authorization_code', true, false],
      ['refresh_token', true, false],
      ['refresh_token', true, false],
      ['refresh_token', true, false],
    ]);
    // Serial PKCE: each refresh proves the verifier whose challenge the previous request sent.
    const forms = tokenForms(h.emu);
    for (const f of forms.slice(1)) {
      expect(Object.keys(f).sort()).toEqual([
        'client_id',
        'code_challenge',
        'code_challenge_method',
        'code_verifier',
        'grant_type',
        'refresh_token',
      ]);
    }
    expect(new Set(forms.map((f) => f.code_challenge)).size).toBe(4);

    const json = await run(['token', '--json']);
    const body = JSON.parse(json.stdout) as Record<string, unknown>;
    const last = await h.record();
    expect(Object.keys(body).sort()).toEqual([
      'access_token',
      'expires_at',
      'expires_in',
      'id_token',
      'scope',
      'token_type',
    ]);
    expect(body).toMatchObject({
      access_token: last?.accessToken,
      token_type: 'Bearer',
      id_token: last?.idToken,
      scope: last?.scope,
    });
    expect(body.expires_in).toBeGreaterThan(3500);
    expect(Date.parse(String(body.expires_at))).toBe(last?.expiresAt);
    expect(json.stdout).not.toContain(String(last?.refreshToken));

    const allowed = [...printed, String(last?.idToken)];
    expectNoSecrets(h, allowed);
    expect(h.outputs.join('')).not.toContain(String(last?.refreshToken));
  });

  it('keeps every secret out of --verbose output', async () => {
    h = await harness();
    const r = await login(h, ['--verbose'], {}, HOW);
    expect(r.stderr).toContain('* POST');
    expect(r.stderr).toContain('/oauth/token -> 200');
    const t = await run(['token', '--refresh', '--verbose']);
    expect(t.code).toBe(0);
    expect(t.stderr).toContain('refreshed the access token');
    const s = await run(['status', '--verbose']);
    expect(s.code).toBe(0);
    expectNoSecrets(h, [t.stdout.trim()]);
  });

  it('refreshes a token that expires within --min-ttl and serves it otherwise', async () => {
    h = await harness({ accessTokenTtl: 120 });
    await login(h, [], {}, HOW);
    const first = (await h.record())?.accessToken;
    const cached = await run(['token', '--min-ttl', '60']);
    expect(cached.stdout.trim()).toBe(first);
    const refreshed = await run(['token']); // default --min-ttl 60 < 120: still cached
    expect(refreshed.stdout.trim()).toBe(first);
    const longer = await run(['token', '--min-ttl', '300']);
    expect(longer.code).toBe(0);
    expect(longer.stdout.trim()).not.toBe(first);
    expect(longer.stderr).toContain('sooner than 300 s');
    expect(h.emu.tokenEvents.filter((e) => e.grant === 'refresh_token')).toHaveLength(1);
  });
});

describe('login options', () => {
  it('sends login_hint and ui_locales (flag, setting, or the locale)', async () => {
    h = await harness();
    await login(h, ['--login-hint', 'alice@example.com', '--ui-locales', 'de en'], {}, HOW);
    await login(h, [], { LANG: 'fr_FR.UTF-8' }, HOW);
    await login(h, [], { LANG: 'fr_FR.UTF-8', IDCLI_UI_LOCALES: 'es' }, HOW);
    const qs = authorizeQueries(h.emu);
    expect(qs[0]?.get('login_hint')).toBe('alice@example.com');
    expect(qs[0]?.get('ui_locales')).toBe('de en');
    expect(qs[1]?.get('ui_locales')).toBe('fr-FR');
    expect(qs[1]?.has('login_hint')).toBe(false);
    expect(qs[2]?.get('ui_locales')).toBe('es');
  });

  it('adds --scope after openid and the client name', async () => {
    h = await harness();
    const r = await run(['login', '--scope', 'extra', '--timeout', '30']);
    // The emulator grants what was asked for as long as openid and the client name are present.
    expect(r.code, r.stderr).toBe(0);
    expect(authorizeQueries(h.emu)[0]?.get('scope')).toBe(`openid ${h.emu.client.name} extra`);
  });

  it('uses an existing session with --prompt none, and says so when there is none', async () => {
    h = await harness();
    const none = await run(['login', '--prompt', 'none', '--timeout', '30']);
    expect(none.code).toBe(3);
    expect(none.stderr).toContain('login_required');
    expect(none.stderr).toContain('without --prompt none');
    expect(await h.record()).toBeNull();

    await login(h, [], {}, HOW); // creates the SSO session in the browser's cookie jar
    const silent = await run(['login', '--prompt', 'none', '--timeout', '30']);
    expect(silent.code, silent.stderr).toBe(0);
    expect(authorizeQueries(h.emu)[2]?.get('prompt')).toBe('none');
    // No form was submitted the second time: the emulator redirected straight back.
    expect(h.emu.requests.filter((r) => r.path === '/oauth/login')).toHaveLength(1);
    expectNoSecrets(h);
  });

  it('signs up with --prompt create', async () => {
    h = await harness();
    const r = await run(['login', '--prompt', 'create', '--login-hint', 'bob@example.com', '--timeout', '30'], {
      HTTP_BROWSER_ACTION: 'signup',
      HTTP_BROWSER_NAME: 'Bob Builder',
      HTTP_BROWSER_PASSWORD: 'a-long-password',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Signed in as Bob Builder <bob@example.com>');
    expect(h.emu.requests.some((x) => x.path === '/oauth/signup')).toBe(true);
  });

  it('reports access_denied with exit 3', async () => {
    h = await harness();
    const r = await run(['login', '--timeout', '30'], { HTTP_BROWSER_ACTION: 'cancel' });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/error: sign-in was denied or cancelled \(access_denied/);
    expect(await h.record()).toBeNull();
    expect(h.emu.tokenEvents).toHaveLength(0);
  });

  it('times out with exit 3', async () => {
    h = await harness();
    const r = await loginTimingOut(2, { HTTP_BROWSER_ACTION: 'none' });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('sign-in timed out after 2 s');
    expect(r.elapsedMs).toBeGreaterThanOrEqual(2000);
  });

  it('refuses a callback with the wrong state and keeps waiting for the right one', async () => {
    h = await harness();
    const r = await run(['login', '--timeout', '30', '--verbose'], { HTTP_BROWSER_ACTION: 'wrong-state' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('refused a callback (state does not match)');
    const log = await readFile(`${h.dir}/browser.log`, 'utf8');
    expect(log).toMatch(/callback\?code=\*\*\*&state=\*\*\* -> 400 \(callback\)/);
    expect(log).toMatch(/-> 303 \(callback\)/);
  });

  it('prints the URL with --no-browser, ignores stray requests, and completes', async () => {
    h = await harness();
    const env = h.env({ BROWSER: '/nonexistent/should-not-run' });
    let stderr = '';
    const args = ['login', '--no-browser', '--timeout', '30'];
    const extra = { BROWSER: '/nonexistent/should-not-run' };
    const running =
      HOW === 'command'
        ? h.command(args, extra, { onStderr: (text) => void (stderr += text) })
        : h.run(args, extra, {
            onSpawn: (child) =>
              child.stderr?.on('data', (b: Buffer) => {
                stderr += b.toString();
              }),
          });
    const url = await until(() => authorizeUrlIn(stderr), 20_000, 'the sign-in URL');
    expect(stderr).toContain('Open this URL in a browser');
    const redirect = new URL(String(url.searchParams.get('redirect_uri')));
    const stray = async (path: string, init: RequestInit = {}) =>
      (await fetch(new URL(path, redirect), { redirect: 'manual', ...init })).status;
    expect(await stray('/')).toBe(404);
    expect(await stray('/callback', { method: 'POST' })).toBe(405);
    expect(await stray('/callback?code=x')).toBe(400);
    expect(await stray('/callback?code=x&state=guess')).toBe(400);
    expect(await stray('/callback?error=access_denied&state=guess')).toBe(400);
    expect(await browse(url.href, env)).toBe(0);
    const r = await running;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('could not start');
    expectNoSecrets(h);
  });

  it('names a busy port', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      h = await harness({ redirectUri: `http://127.0.0.1:${port}/callback` });
      const r = await run(['login', '--timeout', '30']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`port ${port} is already in use`);
      expect(authorizeQueries(h.emu)).toHaveLength(0);
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });

  it('signs in through localhost on a fixed registered port', async () => {
    // A fixed port chosen by the system, so the registered callback can be byte-for-byte.
    const probe: Server = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    h = await harness({ redirectUri: `http://localhost:${port}/cb`, loopbackAnyPort: false });
    expect(h.emu.client.callbackUrl).toBe(`http://localhost:${port}/cb`);
    await login(h, [], {}, HOW);
    expect(tokenForms(h.emu)[0]?.redirect_uri).toBe(`http://localhost:${port}/cb`);
  });

  it('checks iss when the server sends one (RFC 9207)', async () => {
    h = await harness({ sendIss: true });
    await login(h, [], {}, HOW);
    const r = await run(['login', '--timeout', '30'], { IDCLI_ISSUER: 'https://issuer.example' });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('unexpected issuer');
    expect(h.emu.tokenEvents).toHaveLength(1); // the code of the second sign-in was never redeemed
  });

  it('warns when $BROWSER fails and keeps waiting', async () => {
    h = await harness();
    const r = await loginTimingOut(1, { BROWSER: '/nonexistent/browser' });
    expect(r.stderr).toContain('warning: could not start $BROWSER (ENOENT)');
    expect(r.stderr).toContain('/oauth/authorize?');
    expect(r.stderr).toContain('sign-in timed out after 1 s');
    expect(r.code).toBe(3);
  });

  it('needs its settings, and says how to set them', async () => {
    h = await harness();
    const r = await run(['login'], { IDCLI_CLIENT_NAME: undefined });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('client-name is not set');
    expect(r.stderr).toContain('IDCLI_CLIENT_NAME');
    const t = await run(['token'], { IDCLI_BASE_URL: undefined });
    expect(t.code).toBe(2);
    expect(t.stderr).toContain('base-url is not set');
  });
});

describe('status and logout', () => {
  it('reports the sign-in, then forgets it', async () => {
    h = await harness();
    const before = await run(['status']);
    expect(before.code).toBe(3);
    expect(before.stdout).toContain('Signed in:');
    expect(before.stderr).toContain('run `idcli login`');

    await login(h, [], {}, HOW);
    const human = await run(['status']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('Signed in as:  Alice Example <alice@example.com>');
    expect(human.stdout).toContain('Refresh token: held');
    expect(human.stdout).toMatch(/Access token:\s+valid for 59 min/);
    expect(human.stdout).toContain(`Client id:     ${h.emu.client.id}`);
    const json = JSON.parse((await run(['status', '--json'])).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({
      profile: 'default',
      baseUrl: h.emu.baseUrl,
      clientId: h.emu.client.id,
      signedIn: true,
      user: { name: 'Alice Example', email: 'alice@example.com' },
      refreshToken: true,
      expired: false,
      storeKind: 'file',
    });
    expect(String(json.store)).toContain(h.dir);

    const out = await run(['logout']);
    expect(out.code).toBe(0);
    expect(out.stderr).toContain('Signed out of profile default');
    expect(await h.record()).toBeNull();
    const again = await run(['logout']);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('nothing to remove');
    const token = await run(['token']);
    expect(token.code).toBe(3);
    expect(token.stderr).toContain('run `idcli login`');
    expectNoSecrets(h);
  });

  it('keeps profiles apart', async () => {
    h = await harness();
    await login(h, ['--profile', 'work'], {}, HOW);
    expect(await h.record('work')).not.toBeNull();
    expect(await h.record('default')).toBeNull();
    expect((await run(['token'])).code).toBe(3);
    expect((await run(['token', '--profile', 'work'])).code).toBe(0);
  });

  it('uses IDCLI_ACCESS_TOKEN as is, without touching the store', async () => {
    h = await harness();
    const r = await run(['token'], { IDCLI_ACCESS_TOKEN: 'given-token-value' });
    expect(r).toMatchObject({ code: 0, stdout: 'given-token-value\n', stderr: '' });
    const j = JSON.parse(
      (await run(['token', '--json'], { IDCLI_ACCESS_TOKEN: 'given-token-value' })).stdout,
    ) as Record<string, unknown>;
    expect(j.access_token).toBe('given-token-value');
    const s = await run(['status', '--json'], { IDCLI_ACCESS_TOKEN: 'given-token-value' });
    expect(JSON.parse(s.stdout)).toMatchObject({ storeKind: 'env', signedIn: true });
    expect(s.stdout).not.toContain('given-token-value');
    expect(h.emu.requests).toHaveLength(0);
  });
});

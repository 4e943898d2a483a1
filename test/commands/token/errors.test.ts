/**
 * Malformed and hostile token endpoint answers, refused and expired grants, each command run in process. The refresh
 * faults are injected for the next /oauth/token request only, so the emulator's own state stays the truth.
 * What depends on the stored record runs with each credential store.
 */
import { describe, expect, it, type TestContext } from 'vitest';
import type { Fault } from '../../emulator/index.js';
import {
  describeEachStore,
  expectNoSecrets,
  type Harness,
  harness,
  type HarnessOptions,
  login,
  storeLogin,
} from '../../support/harness.js';

/**
 * A harness for the calling test, closed once the test has finished: each test has its own, so they run at once.
 * Its emulator serves no records: no test here lists them, and making the default thousand for every harness was
 * most of the file's work outside the runs.
 */
async function harnessFor({ onTestFinished }: TestContext, opts: HarnessOptions = {}): Promise<Harness> {
  const h = await harness({ recordItems: 0, ...opts });
  onTestFinished(() => h.close());
  return h;
}

const json = (status: number, body: unknown): Fault => ({
  kind: 'body',
  status,
  contentType: 'application/json',
  body: JSON.stringify(body),
});

const BROKEN: [string, Fault, number, RegExp][] = [
  [
    'an HTML page',
    { kind: 'body', status: 200, contentType: 'text/html', body: '<html><body>Sign in</body></html>' },
    5,
    /HTML page from \/oauth\/token/,
  ],
  [
    'an empty body',
    { kind: 'body', status: 200, contentType: 'application/json', body: '' },
    5,
    /empty body from \/oauth\/token/,
  ],
  ['no access_token', json(200, { token_type: 'Bearer', expires_in: 60 }), 5, /no access_token/],
  ['no expires_in', json(200, { access_token: 'x'.repeat(20), token_type: 'Bearer' }), 5, /no expires_in/],
  [
    'truncated JSON',
    { kind: 'body', status: 200, contentType: 'application/json', body: '{"access_token":"abc' },
    5,
    /malformed JSON/,
  ],
  [
    'a redirect',
    { kind: 'status', status: 302, headers: { location: 'https://evil.example/steal' } },
    5,
    /redirect \(HTTP 302\)/,
  ],
  ['a fractional expires_in', json(200, { access_token: 'x'.repeat(20), expires_in: 1.5 }), 5, /invalid expires_in/],
  ['a negative expires_in', json(200, { access_token: 'x'.repeat(20), expires_in: -1 }), 5, /invalid expires_in/],
  [
    'a refresh_token with a control character',
    json(200, { access_token: 'x'.repeat(20), expires_in: 60, refresh_token: `${'r'.repeat(20)}\u0007` }),
    5,
    /invalid refresh_token/,
  ],
  [
    'an id_token with a line break',
    json(200, { access_token: 'x'.repeat(20), expires_in: 60, id_token: 'aaaa.bbbb\n.cccc' }),
    5,
    /invalid id_token/,
  ],
  ['a 500', { kind: 'status', status: 500 }, 4, /answered HTTP 500/],
  ['a dropped connection', { kind: 'drop' }, 4, /oauth\/token failed/],
  [
    'invalid_client (a misregistered client is configuration)',
    json(401, { error: 'invalid_client', error_description: 'unknown client' }),
    2,
    /refused \(HTTP 401, invalid_client\)/,
  ],
];

describe.concurrent('the token endpoint, each test with a harness of its own, at once', () => {
  describe('a broken token endpoint at sign-in', () => {
    it.for(BROKEN)('reports %s with the right exit code and stores nothing', async ([, fault, exit, message], ctx) => {
      const h = await harnessFor(ctx);
      h.emu.inject({ path: '/oauth/token', fault });
      const r = await h.command(['login', '--timeout', '30']);
      expect(r.code, r.stderr).toBe(exit);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.split('\n').filter((l) => l.startsWith('error:'))).toHaveLength(1);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(await h.record()).toBeNull();
      // The redirect was not followed.
      expect(h.emu.requests.filter((x) => x.path === '/oauth/token')).toHaveLength(1);
      expectNoSecrets(h);
    });
  });

  describeEachStore('a broken token endpoint at refresh', (store) => {
    it.for(BROKEN)('reports %s and keeps the stored sign-in', async ([, fault, exit, message], ctx) => {
      const h = await harnessFor(ctx, { store });
      await storeLogin(h);
      const before = await h.record();
      h.emu.inject({ path: '/oauth/token', fault });
      const r = await h.command(['token', '--refresh']);
      expect(r.code, r.stderr).toBe(exit);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
      // The grant was not processed by the emulator, so the stored refresh token is still good.
      expect(await h.record()).toEqual(before);
      const next = await h.command(['token', '--refresh']);
      expect(next.code, next.stderr).toBe(0);
      expectNoSecrets(h, [next.stdout.trim()]);
    });

    it('never prints a hostile error body that echoes the secrets sent', async (ctx) => {
      const h = await harnessFor(ctx, { store });
      await storeLogin(h);
      const rec = await h.record();
      const echo = `${rec?.refreshToken} ${rec?.codeVerifier}`;
      h.emu.inject({ path: '/oauth/token', fault: json(400, { error: rec?.refreshToken, error_description: echo }) });
      h.emu.inject({
        path: '/oauth/token',
        fault: { kind: 'body', status: 503, contentType: 'text/plain', body: echo },
      });
      const a = await h.command(['token', '--refresh', '--verbose']);
      const b = await h.command(['token', '--refresh', '--verbose']);
      expect(a.code).toBe(4);
      expect(a.stderr).toContain('the token endpoint answered HTTP 400');
      expect(b.code).toBe(4);
      expect(b.stderr).toContain('the token endpoint answered HTTP 503');
      expectNoSecrets(h);
    });
  });

  describeEachStore('refused refreshes', (store) => {
    it('clears an expired or revoked sign-in and says to log in (exit 3)', async (ctx) => {
      const h = await harnessFor(ctx, { store });
      await storeLogin(h);
      h.emu.revokeAll();
      const r = await h.command(['token', '--refresh']);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(
        'error: the stored sign-in was rejected by the server (invalid_grant); run `idcli login`',
      );
      expect(await h.record()).toBeNull();
      const again = await h.command(['token']);
      expect(again.code).toBe(3);
      expect(again.stderr).toContain('not logged in');
      expect(h.emu.tokenEvents.filter((e) => e.grant === 'refresh_token')).toHaveLength(1);
      expectNoSecrets(h);
    });

    it('refreshes an access token that is about to expire, without being asked', async (ctx) => {
      const h = await harnessFor(ctx, { store, accessTokenTtl: 30 });
      await storeLogin(h);
      const first = await h.record();
      const r = await h.command(['token']); // 30 s left is less than the default --min-ttl of 60 s
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).not.toBe(first?.accessToken);
      expect(r.stdout.trim()).toBe((await h.record())?.accessToken);
      expect(r.stderr).toContain('sooner than 60 s');
      expect(h.emu.tokenEvents.filter((e) => e.grant === 'refresh_token' && e.ok)).toHaveLength(1);
    });

    it('keeps the old refresh token when a refresh returns none, and exit 3 when it is then refused', async (ctx) => {
      const h = await harnessFor(ctx, { store, refreshTokenOnRefresh: false });
      await storeLogin(h);
      const first = await h.record();
      const ok = await h.command(['token', '--refresh']);
      expect(ok.code).toBe(0);
      const after = await h.record();
      expect(after?.refreshToken).toBe(first?.refreshToken);
      expect(after?.codeVerifier).not.toBe(first?.codeVerifier); // the verifier of the challenge just sent
      const refused = await h.command(['token', '--refresh']);
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain('run `idcli login`');
    });

    it('signs in without a refresh token, serves the access token, and needs a login to refresh', async (ctx) => {
      const h = await harnessFor(ctx, { store, issueRefreshTokens: false });
      const r = await login(h, [], {}, 'command');
      expect(r.stderr).toContain('warning: the server sent no refresh token');
      expect((await h.command(['token'])).code).toBe(0);
      const refresh = await h.command(['token', '--refresh']);
      expect(refresh.code).toBe(3);
      expect(refresh.stderr).toContain('no refresh token is stored');
      expect(h.emu.tokenEvents.filter((e) => e.grant === 'refresh_token')).toHaveLength(0);
    });

    it('calls an unreadable record exit 3 and lets login replace it', async (ctx) => {
      const h = await harnessFor(ctx, { store });
      await storeLogin(h);
      await h.damageRecord();
      const r = await h.command(['token']);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('idcli login');
      await login(h, [], {}, 'command');
      expect((await h.command(['token'])).code).toBe(0);
    });
  });

  const YEAR_MS = 365 * 24 * 60 * 60 * 1000;

  describeEachStore('access-token lifetimes beyond a year', (store) => {
    it('an expires_in of 1e300 at sign-in is taken as a year, said with --verbose; token and status work', async (ctx) => {
      const h = await harnessFor(ctx, { store, accessTokenTtl: 1e300 });
      const before = Date.now();
      const r = await login(h, ['--verbose'], {}, 'command');
      const after = Date.now();
      expect(r.stderr).toContain(
        "the server's expires_in of 1e+300 s is more than a year; the access token is taken to",
      );
      const rec = (await h.record())!;
      expect(rec.expiresAt).toBeGreaterThanOrEqual(before + YEAR_MS);
      expect(rec.expiresAt).toBeLessThanOrEqual(after + YEAR_MS);
      const t = await h.command(['token']);
      expect(t.code, t.stderr).toBe(0);
      expect(t.stdout).toBe(`${rec.accessToken}\n`);
      const json = await h.command(['token', '--json']);
      expect(json.code, json.stderr).toBe(0);
      const out = JSON.parse(json.stdout) as { expires_in: number; expires_at: string };
      expect(out.expires_at).toBe(new Date(rec.expiresAt!).toISOString());
      expect(out.expires_in).toBeLessThanOrEqual(YEAR_MS / 1000);
      expect(out.expires_in).toBeGreaterThan(YEAR_MS / 1000 - 600);
      const status = await h.command(['status']);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(/Access token: +valid for 87(59|60) h \d+ min \(until /);
      expectNoSecrets(h, [rec.accessToken!, rec.idToken!]); // both printed by `token --json`, by design
    });

    it('an expires_in of 2^53-1 from a refresh is taken as a year too', async (ctx) => {
      const h = await harnessFor(ctx, { store });
      await storeLogin(h);
      h.emu.inject({ path: '/oauth/token', fault: { kind: 'patch', fields: { expires_in: Number.MAX_SAFE_INTEGER } } });
      const r = await h.command(['token', '--refresh', '--verbose']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain("the server's expires_in of 9007199254740991 s is more than a year");
      const rec = (await h.record())!;
      expect(r.stdout).toBe(`${rec.accessToken}\n`);
      expect(rec.expiresAt).toBeLessThanOrEqual(Date.now() + YEAR_MS);
      const status = await h.command(['status', '--json']);
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({
        expired: false,
        expiresAt: new Date(rec.expiresAt!).toISOString(),
      });
    });

    it('a record stored with an expiry beyond any date reads as a year after it was written', async (ctx) => {
      const h = await harnessFor(ctx, { store });
      await storeLogin(h);
      const rec = (await h.record())!;
      for (const expiresAt of [1e303, Number.MAX_SAFE_INTEGER * 1000]) {
        await h.writeRecord({ ...rec, expiresAt });
        const status = await h.command(['status', '--json', '--verbose']);
        expect(status.code, status.stderr).toBe(0);
        expect(JSON.parse(status.stdout)).toMatchObject({
          expired: false,
          expiresAt: new Date(rec.updatedAt + YEAR_MS).toISOString(),
        });
        const t = await h.command(['token', '--verbose']);
        expect(t.code, t.stderr).toBe(0);
        expect(t.stdout).toBe(`${rec.accessToken}\n`);
        for (const stderr of [status.stderr, t.stderr]) expect(stderr).not.toMatch(/Invalid time value|\n\s+at /);
      }
      // An expiry before any date is as expired as any: `status` says so and `token` refreshes.
      await h.writeRecord({ ...rec, expiresAt: -1e300 });
      const status = await h.command(['status']);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain('expired at 1970-01-01T00:00:00.000Z');
      const t = await h.command(['token']);
      expect(t.code, t.stderr).toBe(0);
      expect(t.stdout.trim()).toBe((await h.record())?.accessToken);
      expect(t.stdout.trim()).not.toBe(rec.accessToken);
    });
  });

  describeEachStore('tokens with control characters from a working token endpoint', (store) => {
    const BAD = 'rt-\u001b[2J-0123456789';

    it('are refused at sign-in (exit 5): nothing is stored', async (ctx) => {
      const h = await harnessFor(ctx, { store });
      h.emu.inject({ path: '/oauth/token', fault: { kind: 'patch', fields: { refresh_token: BAD } } });
      const r = await h.command(['login', '--timeout', '30']);
      expect(r.code, r.stderr).toBe(5);
      expect(r.stderr).toContain('error: the token response from /oauth/token has an invalid refresh_token');
      expect(r.stderr).not.toContain('\u001b');
      expect(await h.record()).toBeNull();
    });

    it('are refused at refresh (exit 5): the stored sign-in stays readable', async (ctx) => {
      const h = await harnessFor(ctx, { store });
      await storeLogin(h);
      const before = (await h.record())!;
      h.emu.inject({ path: '/oauth/token', fault: { kind: 'patch', fields: { refresh_token: BAD } } });
      const r = await h.command(['token', '--refresh']);
      expect(r.code, r.stderr).toBe(5);
      expect(r.stdout).toBe('');
      expect(await h.record()).toEqual(before);
      const cached = await h.command(['token']);
      expect(cached.code, cached.stderr).toBe(0);
      expect(cached.stdout).toBe(`${before.accessToken}\n`);
      const status = await h.command(['status']);
      expect(status.code, status.stderr).toBe(0);
    });
  });
});

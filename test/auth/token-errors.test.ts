/**
 * Malformed and hostile token endpoint answers, refused and expired grants, through the built CLI. The refresh
 * faults are injected for the next /oauth/token request only, so the emulator's own state stays the truth.
 * What depends on the stored record runs with each credential store.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Fault } from '../emulator/index.js';
import { describeEachStore, expectNoSecrets, type Harness, harness, login } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

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
  ['a 500', { kind: 'status', status: 500 }, 4, /answered HTTP 500/],
  ['a dropped connection', { kind: 'drop' }, 4, /oauth\/token failed/],
  [
    'invalid_client',
    json(401, { error: 'invalid_client', error_description: 'unknown client' }),
    4,
    /refused \(HTTP 401, invalid_client\)/,
  ],
];

describe('a broken token endpoint at sign-in', () => {
  it.each(BROKEN)('reports %s with the right exit code and stores nothing', async (_what, fault, exit, message) => {
    h = await harness();
    h.emu.inject({ path: '/oauth/token', fault });
    const r = await h.run(['login', '--timeout', '30']);
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
  it.each(BROKEN)('reports %s and keeps the stored sign-in', async (_what, fault, exit, message) => {
    h = await harness({ store });
    await login(h);
    const before = await h.record();
    h.emu.inject({ path: '/oauth/token', fault });
    const r = await h.run(['token', '--refresh']);
    expect(r.code, r.stderr).toBe(exit);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
    // The grant was not processed by the emulator, so the stored refresh token is still good.
    expect(await h.record()).toEqual(before);
    const next = await h.run(['token', '--refresh']);
    expect(next.code, next.stderr).toBe(0);
    expectNoSecrets(h, [next.stdout.trim()]);
  });

  it('never prints a hostile error body that echoes the secrets sent', async () => {
    h = await harness({ store });
    await login(h);
    const rec = await h.record();
    const echo = `${rec?.refreshToken} ${rec?.codeVerifier}`;
    h.emu.inject({ path: '/oauth/token', fault: json(400, { error: rec?.refreshToken, error_description: echo }) });
    h.emu.inject({ path: '/oauth/token', fault: { kind: 'body', status: 503, contentType: 'text/plain', body: echo } });
    const a = await h.run(['token', '--refresh', '--verbose']);
    const b = await h.run(['token', '--refresh', '--verbose']);
    expect(a.code).toBe(4);
    expect(a.stderr).toContain('the token endpoint answered HTTP 400');
    expect(b.code).toBe(4);
    expect(b.stderr).toContain('the token endpoint answered HTTP 503');
    expectNoSecrets(h);
  });
});

describeEachStore('refused refreshes', (store) => {
  it('clears an expired or revoked sign-in and says to log in (exit 3)', async () => {
    h = await harness({ store });
    await login(h);
    h.emu.revokeAll();
    const r = await h.run(['token', '--refresh']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(
      'error: the stored sign-in was rejected by the server (invalid_grant); run `idcli login`',
    );
    expect(await h.record()).toBeNull();
    const again = await h.run(['token']);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('not logged in');
    expect(h.emu.tokenEvents.filter((e) => e.grant === 'refresh_token')).toHaveLength(1);
    expectNoSecrets(h);
  });

  it('refreshes an access token that is about to expire, without being asked', async () => {
    h = await harness({ store, accessTokenTtl: 30 });
    await login(h);
    const first = await h.record();
    const r = await h.run(['token']); // 30 s left is less than the default --min-ttl of 60 s
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).not.toBe(first?.accessToken);
    expect(r.stdout.trim()).toBe((await h.record())?.accessToken);
    expect(r.stderr).toContain('sooner than 60 s');
    expect(h.emu.tokenEvents.filter((e) => e.grant === 'refresh_token' && e.ok)).toHaveLength(1);
  });

  it('keeps the old refresh token when a refresh returns none, and exit 3 when it is then refused', async () => {
    h = await harness({ store, refreshTokenOnRefresh: false });
    await login(h);
    const first = await h.record();
    const ok = await h.run(['token', '--refresh']);
    expect(ok.code).toBe(0);
    const after = await h.record();
    expect(after?.refreshToken).toBe(first?.refreshToken);
    expect(after?.codeVerifier).not.toBe(first?.codeVerifier); // the verifier of the challenge just sent
    const refused = await h.run(['token', '--refresh']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('run `idcli login`');
  });

  it('signs in without a refresh token, serves the access token, and needs a login to refresh', async () => {
    h = await harness({ store, issueRefreshTokens: false });
    const r = await login(h);
    expect(r.stderr).toContain('warning: the server sent no refresh token');
    expect((await h.run(['token'])).code).toBe(0);
    const refresh = await h.run(['token', '--refresh']);
    expect(refresh.code).toBe(3);
    expect(refresh.stderr).toContain('no refresh token is stored');
    expect(h.emu.tokenEvents.filter((e) => e.grant === 'refresh_token')).toHaveLength(0);
  });

  it('calls an unreadable record exit 3 and lets login replace it', async () => {
    h = await harness({ store });
    await login(h);
    await h.damageRecord();
    const r = await h.run(['token']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('idcli login');
    await login(h);
    expect((await h.run(['token'])).code).toBe(0);
  });
});

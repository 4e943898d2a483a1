/**
 * IDCLI_ACCESS_TOKEN: `status` reports it, and its expiry when it is a JWT with `exp`, without any sign-in setting;
 * `token --min-ttl n` holds it to that expiry (exit 3 when it is too close, expired or unknown), never printing it.
 * Each store holds a valid sign-in meanwhile, which the variable overrides without reading or touching it. Each
 * command runs in process.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CredentialRecord } from '../../../src/store/record.js';
import { jwt } from '../../support/jwt.js';
import { describeEachStore, type Harness, harness, storeLogin } from '../../support/harness.js';

const nowSec = () => Math.floor(Date.now() / 1000);
/** An hour after this file loaded: still most of an hour away when any test here runs. */
const LONG_EXP = nowSec() + 3600;
const TOKENS = {
  /** exp = 1e9: September 2001. */
  expired: () => jwt({ sub: 'ci', exp: 1_000_000_000 }),
  shortLived: () => jwt({ sub: 'ci', exp: nowSec() + 120 }),
  longLived: () => jwt({ sub: 'ci', exp: LONG_EXP }),
  withoutExp: () => jwt({ sub: 'ci' }),
  opaque: () => 'opaque-token-0123456789abcdef',
};

/** No sign-in setting at all: the token is all there is. */
const NO_SETTINGS = {
  IDCLI_BASE_URL: undefined,
  IDCLI_CLIENT_ID: undefined,
  IDCLI_CLIENT_NAME: undefined,
  IDCLI_REDIRECT_URI: undefined,
};

describeEachStore('IDCLI_ACCESS_TOKEN', (store) => {
  let h: Harness;
  let stored: CredentialRecord;
  beforeEach(async () => {
    // No records: nothing here lists them, and the emulator would make a thousand for each test.
    h = await harness({ store, recordItems: 0 });
    stored = await storeLogin(h);
  });
  afterEach(async () => {
    // The stored sign-in was neither read into a request nor changed, and nothing reached the token endpoint.
    expect(await h.record()).toEqual(stored);
    expect(h.emu.requests.filter((r) => r.path === '/oauth/token')).toHaveLength(0);
    await h.close();
  });

  async function token(value: string, args: string[] = []) {
    const r = await h.command(['token', ...args], { IDCLI_ACCESS_TOKEN: value });
    // A refused token is never printed, in the error or anywhere else.
    if (r.code !== 0) expect(r.stdout + r.stderr).not.toContain(value);
    return r;
  }

  describe('token --min-ttl', () => {
    it('an expired JWT: exit 3, saying when it expired', async () => {
      const r = await token(TOKENS.expired(), ['--min-ttl', '600']);
      expect(r.code).toBe(3);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        'error: the access token in IDCLI_ACCESS_TOKEN expired at 2001-09-09T01:46:40.000Z; provide a fresh one, or unset IDCLI_ACCESS_TOKEN to use the stored sign-in\n',
      );
    });

    it('a JWT that expires in 2 minutes: exit 3 for 600 s, printed for 60 s', async () => {
      const t = TOKENS.shortLived();
      const r = await token(t, ['--min-ttl', '600']);
      expect(r.code).toBe(3);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(
        /^error: the access token in IDCLI_ACCESS_TOKEN expires in 1[01]\d s \(at \S+Z\), within --min-ttl 600; provide a fresh one/,
      );
      expect(await token(t, ['--min-ttl', '60'])).toMatchObject({ code: 0, stdout: `${t}\n`, stderr: '' });
    });

    it('a JWT valid for an hour passes a 600 s guard, in every output form', async () => {
      const t = TOKENS.longLived();
      expect(await token(t, ['--min-ttl', '600'])).toMatchObject({ code: 0, stdout: `${t}\n`, stderr: '' });
      const header = await token(t, ['--min-ttl', '600', '--header']);
      expect(header.stdout).toBe(`Authorization: Bearer ${t}\n`);
      const json = JSON.parse((await token(t, ['--min-ttl', '600', '--json'])).stdout) as Record<string, unknown>;
      expect(json.access_token).toBe(t);
      expect(json.expires_at).toBe(new Date(LONG_EXP * 1000).toISOString());
      expect(json.expires_in).toBeGreaterThan(600);
      expect(json.expires_in).toBeLessThanOrEqual(3600);
    });

    it.each([
      ['an opaque token', TOKENS.opaque],
      ['a JWT without exp', TOKENS.withoutExp],
    ])('%s: exit 3, saying that its expiry cannot be known', async (_, make) => {
      for (const ttl of ['600', '0']) {
        const r = await token(make(), ['--min-ttl', ttl]);
        expect(r.code).toBe(3);
        expect(r.stdout).toBe('');
        expect(r.stderr).toBe(
          `error: the expiry of the access token in IDCLI_ACCESS_TOKEN cannot be known (not a JWT with an exp claim), so --min-ttl ${ttl} cannot be met; leave out --min-ttl to use it without the check\n`,
        );
      }
    });

    it.each([
      [1e300, '1e+300'],
      [8_640_000_000_001, '8640000000001'],
      [8_640_000_000_000, '8640000000000'],
    ])('an exp of %s, which names no date: exit 3 saying so, and status says so too', async (exp, shown) => {
      const t = jwt({ sub: 'ci', exp });
      const why = `its exp claim, ${shown}, names no date from 1970 to 9999`;
      const r = await token(t, ['--min-ttl', '600']);
      expect(r.code).toBe(3);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `error: the expiry of the access token in IDCLI_ACCESS_TOKEN cannot be known (${why}), so --min-ttl 600 cannot be met; leave out --min-ttl to use it without the check\n`,
      );
      const status = await h.command(['status'], { IDCLI_ACCESS_TOKEN: t, ...NO_SETTINGS });
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain(`\nAccess token: expiry unknown (${why})\n`);
      expect(status.stdout).not.toMatch(/valid for/);
      const json = await h.command(['status', '--json'], { IDCLI_ACCESS_TOKEN: t, ...NO_SETTINGS });
      expect(JSON.parse(json.stdout)).toMatchObject({ expiresAt: null, expiresIn: null, expired: null });
      const tokenJson = JSON.parse((await token(t, ['--json'])).stdout) as Record<string, unknown>;
      expect(tokenJson).toMatchObject({ access_token: t, expires_at: null, expires_in: null });
    });

    it('without --min-ttl the token is printed as given, whatever its expiry (nothing could refresh it)', async () => {
      for (const make of Object.values(TOKENS)) {
        const t = make();
        expect(await token(t)).toMatchObject({ code: 0, stdout: `${t}\n`, stderr: '' });
      }
    });
  });

  describe('status', () => {
    it('reports where the token comes from and when a JWT expires, without any sign-in setting', async () => {
      const t = TOKENS.longLived();
      const r = await h.command(['status'], { IDCLI_ACCESS_TOKEN: t, ...NO_SETTINGS });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(
        /^Profile: +default\nSigned in: +using IDCLI_ACCESS_TOKEN \(the stored sign-in is not used\)\nAccess token: +valid for \d+ min \(until \S+Z\)\nCredentials: +IDCLI_ACCESS_TOKEN\n$/,
      );
      const json = await h.command(['status', '--json'], { IDCLI_ACCESS_TOKEN: t, ...NO_SETTINGS });
      expect(json.code, json.stderr).toBe(0);
      const report = JSON.parse(json.stdout) as Record<string, unknown>;
      expect(report).toMatchObject({
        profile: 'default',
        baseUrl: null,
        clientId: null,
        signedIn: true,
        expired: false,
        store: 'IDCLI_ACCESS_TOKEN',
        storeKind: 'env',
      });
      expect(report.expiresAt).toBe(new Date(LONG_EXP * 1000).toISOString());
      expect(report.expiresIn).toBeGreaterThan(600);
      expect(report.expiresIn).toBeLessThanOrEqual(3600);
      expect(json.stdout + r.stdout).not.toContain(t);
    });

    it('an expired JWT is reported expired; an opaque token with its expiry unknown', async () => {
      const expired = await h.command(['status', '--json'], { IDCLI_ACCESS_TOKEN: TOKENS.expired(), ...NO_SETTINGS });
      expect(expired.code, expired.stderr).toBe(0);
      expect(JSON.parse(expired.stdout)).toMatchObject({
        expiresAt: '2001-09-09T01:46:40.000Z',
        expiresIn: 0,
        expired: true,
      });
      const human = await h.command(['status'], { IDCLI_ACCESS_TOKEN: TOKENS.expired(), ...NO_SETTINGS });
      expect(human.stdout).toMatch(/\nAccess token: +expired at 2001-09-09T01:46:40\.000Z\n/);

      const opaque = await h.command(['status', '--json'], { IDCLI_ACCESS_TOKEN: TOKENS.opaque(), ...NO_SETTINGS });
      expect(opaque.code, opaque.stderr).toBe(0);
      expect(JSON.parse(opaque.stdout)).toMatchObject({ expiresAt: null, expiresIn: null, expired: null });
      const plain = await h.command(['status'], { IDCLI_ACCESS_TOKEN: TOKENS.opaque(), ...NO_SETTINGS });
      expect(plain.stdout).toMatch(/\nAccess token: +expiry unknown \(not a JWT with an exp claim\)\n/);
      expect(plain.stdout).not.toContain(TOKENS.opaque());
    });

    it('names the settings it has, and creates nothing in an unused config directory', async () => {
      const empty = join(h.dir, 'never-used');
      const r = await h.command(['status'], { IDCLI_ACCESS_TOKEN: TOKENS.opaque(), IDCLI_CONFIG_DIR: empty });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`Base URL:     ${h.emu.baseUrl}\n`);
      expect(await readdir(empty).catch(() => [])).toEqual([]);
    });
  });
});

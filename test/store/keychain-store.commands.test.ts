/**
 * Sign-in records in the REAL OS keychain, through the CLI in process (the keychain is as real there). Run under `scripts/with-keyring.sh` (a private
 * D-Bus session with gnome-keyring, IDCLI_TEST_KEYRING=1); with IDCLI_REQUIRE_KEYCHAIN=1 (CI) they run anyway and
 * fail when no keyring is there. The fallback tests need no keyring: the missing D-Bus is the point.
 */
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { KeychainStore } from '../../src/store/keychain-store.js';
import { accountName } from '../../src/store/record.js';
import { expectNoSecrets, type Harness, harness, login } from '../support/harness.js';

const HAVE_KEYRING = process.env.IDCLI_TEST_KEYRING === '1';
const REQUIRE_KEYRING = process.env.IDCLI_REQUIRE_KEYCHAIN === '1';
const exec = promisify(execFile);

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function files(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

/** What any other program sees in the Secret Service for this service name. */
async function secretToolEntries(service: string): Promise<string> {
  try {
    const { stdout, stderr } = await exec('secret-tool', ['search', '--all', 'service', service]);
    return `${stdout}${stderr}`;
  } catch {
    return '';
  }
}

describe.runIf(HAVE_KEYRING || REQUIRE_KEYRING)('sign-in in the OS keychain', () => {
  it('stores the record in the Secret Service and not in a file, and logout removes it', async () => {
    const service = `idcli-auth-${process.pid}-${Date.now().toString(36)}`;
    h = await harness({ recordItems: 0 });
    const env = { IDCLI_CREDENTIAL_STORE: 'keychain', IDCLI_KEYCHAIN_SERVICE: service };
    const r = await login(h, [], env, 'command');
    expect(r.stderr).toContain('credentials in OS keychain)');
    expect(r.stderr).not.toContain('warning');

    const account = accountName(h.key());
    const listing = await secretToolEntries(service);
    expect(listing).toContain(`attribute.service = ${service}`);
    expect(listing).toContain(`attribute.username = ${account}`);
    expect(await files(join(h.dir, 'config', 'credentials'))).toEqual([]);

    // Read back through the library: the whole record, refresh token and verifier together.
    const store = new KeychainStore({ service });
    try {
      const rec = await store.read(h.key());
      expect(rec?.refreshToken).toBeTruthy();
      expect(rec?.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);

      const t = await h.command(['token', '--refresh'], env);
      expect(t.code, t.stderr).toBe(0);
      const after = await store.read(h.key());
      expect(after?.generation).toBe((rec?.generation ?? 0) + 1);
      expect(t.stdout).toBe(`${after?.accessToken}\n`);
      expect(after?.refreshToken).not.toBe(rec?.refreshToken);

      const s = await h.command(['status', '--json'], env);
      expect(JSON.parse(s.stdout)).toMatchObject({
        storeKind: 'keychain',
        store: `OS keychain (service "${service}")`,
      });

      // auto mode finds the same record in the keychain.
      const auto = await h.command(['token'], { ...env, IDCLI_CREDENTIAL_STORE: 'auto' });
      expect(auto.stdout).toBe(t.stdout);

      expect((await h.command(['logout'], env)).stderr).toContain(`removed from OS keychain (service "${service}")`);
      expect(await store.read(h.key())).toBeNull();
      expect(await secretToolEntries(service)).not.toContain(account);
      expectNoSecrets(h, [t.stdout.trim()]);
    } finally {
      store.close();
      await exec('secret-tool', ['clear', 'service', service]).catch(() => {});
    }
  });
});

describe('without a D-Bus session', () => {
  const noBus = {
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/idcli-no-bus',
    IDCLI_KEYCHAIN_SERVICE: 'idcli-no-bus',
  };

  const fallbackWarning = /^warning: OS keychain unavailable \(.+\); storing credentials in .+ instead/m;
  const warnings = (stderr: string) => stderr.match(/^warning: OS keychain unavailable/gm)?.length ?? 0;

  it('auto mode falls back to the file store and says so when it writes there, not when it reads', async () => {
    h = await harness({ recordItems: 0 });
    h.emu.setCollection('/v1/items', { type: 'offset', items: ['{"id":1}', '{"id":2}'] });
    h.emu.setResource('/v1/users/42', '{"id":42}');
    const auto = { ...noBus, IDCLI_CREDENTIAL_STORE: 'auto', IDCLI_API_BASE_URL: `${h.emu.baseUrl}/v1` };

    const r = await h.command(['login', '--timeout', '30'], auto);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(fallbackWarning);
    expect(warnings(r.stderr)).toBe(1);
    expect(r.stderr).toContain('credentials in file');
    expect(await files(join(h.dir, 'config', 'credentials'))).toHaveLength(1);

    // Reads: the cached token, a list, an API call. A CI job runs these many times; the log stays clean.
    const t = await h.command(['token'], auto);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toBe(`${(await h.record())?.accessToken}\n`);
    expect(t.stderr).toBe('');
    const l = await h.command(['list', '/v1/items'], auto);
    expect(l.code, l.stderr).toBe(0);
    expect(l.stdout).toBe('{"id":1}\n{"id":2}\n');
    expect(l.stderr).not.toContain('warning');
    const a = await h.command(['api', 'users/42'], auto);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stderr).not.toContain('warning');

    // A refresh overwrites the record that is already there: no warning either.
    const before = await h.record();
    const refreshed = await h.command(['token', '--refresh'], auto);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect((await h.record())?.generation).toBe((before?.generation ?? 0) + 1);
    expect(refreshed.stderr).toBe('');

    // Asked where the credentials are, status and doctor say it.
    const s = await h.command(['status'], auto);
    expect(s.code, s.stderr).toBe(0);
    expect(s.stderr).toMatch(fallbackWarning);
    expect(warnings(s.stderr)).toBe(1);
    const d = await h.command(['doctor'], auto);
    expect(`${d.stdout}${d.stderr}`).toMatch(/OS keychain unavailable \(.+\); storing credentials in .+ instead/);
    expect(d.stdout).toMatch(/^warn {2}credential store/m);

    // Signing in again is a new sign-in: told again, once.
    const again = await h.command(['login', '--timeout', '30'], auto);
    expect(again.code, again.stderr).toBe(0);
    expect(warnings(again.stderr)).toBe(1);
    expectNoSecrets(h, [t.stdout.trim(), refreshed.stdout.trim()]);
  });

  it('IDCLI_CREDENTIAL_STORE=file says nothing about the keychain, at login or after', async () => {
    h = await harness({ recordItems: 0 });
    const file = { ...noBus, IDCLI_CREDENTIAL_STORE: 'file' };
    const r = await login(h, [], file, 'command');
    expect(r.stderr).not.toContain('warning');
    for (const args of [['token'], ['token', '--refresh'], ['status']]) {
      const run = await h.command(args, file);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr, args.join(' ')).not.toContain('warning');
    }
    const d = await h.command(['doctor'], file);
    expect(`${d.stdout}${d.stderr}`).not.toContain('keychain unavailable');
  });

  it('keychain mode is a configuration error (exit 2) before any browser opens', async () => {
    h = await harness({ recordItems: 0 });
    const r = await h.command(['login', '--timeout', '30'], { ...noBus, IDCLI_CREDENTIAL_STORE: 'keychain' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('keychain unavailable');
    expect(h.emu.requests).toHaveLength(0);
  });
});

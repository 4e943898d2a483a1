/**
 * Sign-in records in the REAL OS keychain, through the built CLI. Run under `scripts/with-keyring.sh` (a private
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
import { expectNoSecrets, type Harness, harness, login } from './harness.js';

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
    h = await harness();
    const env = { IDCLI_CREDENTIAL_STORE: 'keychain', IDCLI_KEYCHAIN_SERVICE: service };
    const r = await login(h, [], env);
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

      const t = await h.run(['token', '--refresh'], env);
      expect(t.code, t.stderr).toBe(0);
      const after = await store.read(h.key());
      expect(after?.generation).toBe((rec?.generation ?? 0) + 1);
      expect(t.stdout).toBe(`${after?.accessToken}\n`);
      expect(after?.refreshToken).not.toBe(rec?.refreshToken);

      const s = await h.run(['status', '--json'], env);
      expect(JSON.parse(s.stdout)).toMatchObject({
        storeKind: 'keychain',
        store: `OS keychain (service "${service}")`,
      });

      // auto mode finds the same record in the keychain.
      const auto = await h.run(['token'], { ...env, IDCLI_CREDENTIAL_STORE: 'auto' });
      expect(auto.stdout).toBe(t.stdout);

      expect((await h.run(['logout'], env)).stderr).toContain(`removed from OS keychain (service "${service}")`);
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

  it('auto mode falls back to the file store and says so on stderr', async () => {
    h = await harness();
    const r = await h.run(['login', '--timeout', '30'], { ...noBus, IDCLI_CREDENTIAL_STORE: 'auto' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^warning: OS keychain unavailable \(.+\).* instead/m);
    expect(r.stderr).toContain('credentials in file');
    expect(await files(join(h.dir, 'config', 'credentials'))).toHaveLength(1);
    const t = await h.run(['token'], { ...noBus, IDCLI_CREDENTIAL_STORE: 'auto' });
    expect(t.code).toBe(0);
    expect(t.stdout).toBe(`${(await h.record())?.accessToken}\n`);
    expect(t.stderr).toContain('warning: OS keychain unavailable');
  });

  it('keychain mode is a configuration error (exit 2) before any browser opens', async () => {
    h = await harness();
    const r = await h.run(['login', '--timeout', '30'], { ...noBus, IDCLI_CREDENTIAL_STORE: 'keychain' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('keychain unavailable');
    expect(h.emu.requests).toHaveLength(0);
  });
});

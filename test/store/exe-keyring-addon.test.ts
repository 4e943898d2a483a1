/**
 * The keychain addon of the single executable (src/exe/keyring.ts): written once to the user's private cache
 * directory under its SHA-256, loaded only when its owner, mode and bytes check out, written again when they do
 * not, and, where no private directory can hold it, no keychain: the announced file-store fallback. Only the
 * executable has this code, so these tests run when IDCLI_TEST_EXE names one (CI) and are skipped otherwise.
 */
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KEYCHAIN_TESTABLE } from '../auth/harness.js';
import { baseEnv, EXE, runCli, tempDir } from '../support/cli.js';
import { sha256 } from '../support/hash.js';

let dir: { path: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  dir = await tempDir('idcli-addon-');
});
afterEach(() => dir.cleanup());

interface Check {
  id: string;
  status: string;
  detail: string;
}

/** doctor's verdict on the credential store, with idcli's cache under `cache`. */
async function storeCheck(cache: string): Promise<Check> {
  const env = baseEnv({ XDG_CACHE_HOME: cache, IDCLI_CONFIG_DIR: join(dir.path, 'config') });
  const r = await runCli(['doctor', '--json'], { env });
  const checks = (JSON.parse(r.stdout) as { checks: Check[] }).checks;
  return checks.find((c) => c.id === 'store')!;
}

async function addonFile(cache: string): Promise<string> {
  const names = (await readdir(join(cache, 'idcli'))).filter((n) => /^keyring-[0-9a-f]{64}\.node$/.test(n));
  expect(names).toHaveLength(1);
  return join(cache, 'idcli', names[0]!);
}

describe.runIf(EXE !== undefined && KEYCHAIN_TESTABLE)('the keychain addon of the executable', () => {
  it('is written once, 0700 directory and owner-only file, named by the SHA-256 of its bytes', async () => {
    const cache = join(dir.path, 'cache');
    expect(await storeCheck(cache)).toMatchObject({ status: 'pass' });
    const file = await addonFile(cache);
    expect((await stat(join(cache, 'idcli'))).mode & 0o777).toBe(0o700);
    expect((await stat(file)).mode & 0o077).toBe(0);
    const digest = sha256(await readFile(file));
    expect(file.endsWith(`keyring-${digest}.node`)).toBe(true);
    const written = (await stat(file)).mtimeMs;
    expect(await storeCheck(cache)).toMatchObject({ status: 'pass' });
    expect((await stat(file)).mtimeMs).toBe(written);
  });

  it('is written again when the file holds other bytes or others may read it', async () => {
    const cache = join(dir.path, 'cache');
    await storeCheck(cache);
    const file = await addonFile(cache);
    const good = await readFile(file);
    await chmod(file, 0o600);
    await writeFile(file, 'not the addon');
    expect(await storeCheck(cache)).toMatchObject({ status: 'pass' });
    expect((await readFile(file)).equals(good)).toBe(true);
    await chmod(file, 0o755);
    expect(await storeCheck(cache)).toMatchObject({ status: 'pass' });
    expect((await stat(file)).mode & 0o077).toBe(0);
  });

  it('is not loaded from a cache directory others can enter: no keychain, the file store announced', async () => {
    const cache = join(dir.path, 'cache');
    await mkdir(join(cache, 'idcli'), { recursive: true });
    await chmod(join(cache, 'idcli'), 0o755);
    const check = await storeCheck(cache);
    expect(check.status).toBe('warn');
    expect(check.detail).toContain('no private cache directory');
    expect(check.detail).toContain('storing credentials in');
    expect(await readdir(join(cache, 'idcli'))).toEqual([]);
  });
});

// Needs a process: the packed tarball is installed and its own `idcli` binary run, as users run it.
/**
 * What users get from the registry: `npm pack` holds only what they need, and the tarball installed into a fresh
 * prefix signs in and lists a collection through its own `idcli` binary. Then the platform's prebuilt keyring
 * binary is removed, as on a platform without one: idcli must fall back to the file store and say so.
 */
import { execFile, spawn } from 'node:child_process';
import { readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../emulator/index.js';
import { ROOT, baseEnv, tempDir } from '../support/cli.js';

const exec = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

let tmp: { path: string; cleanup: () => Promise<void> };
let tarball: string;
let emulator: Emulator;

beforeAll(async () => {
  tmp = await tempDir('idcli-pack-');
  // --ignore-scripts: the suite already built dist/; a prepack rebuild would swap files under running tests.
  const { stdout } = await exec(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp.path], {
    cwd: ROOT,
  });
  const [info] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  tarball = join(tmp.path, info!.filename);
  packedFiles = info!.files.map((f) => f.path).sort();
  emulator = await startEmulator({ loopbackAnyPort: true, callbackUrl: 'http://127.0.0.1:8765/callback' });
}, 120_000);
afterAll(async () => {
  await emulator?.close();
  await tmp?.cleanup();
});

let packedFiles: string[] = [];

async function install(prefix: string): Promise<string> {
  await exec(npm, ['install', '-g', '--no-audit', '--no-fund', '--prefix', prefix, tarball], {
    cwd: tmp.path,
    timeout: 180_000,
  });
  return join(prefix, 'bin', 'idcli');
}

function run(bin: string, args: string[], env: Record<string, string | undefined>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(bin, args, {
      env: Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function cliEnv(configDir: string, extra: Record<string, string | undefined> = {}) {
  return baseEnv({
    IDCLI_BASE_URL: emulator.baseUrl,
    IDCLI_CLIENT_ID: emulator.client.id,
    IDCLI_CLIENT_NAME: emulator.client.name,
    IDCLI_REDIRECT_URI: 'http://127.0.0.1:0/callback',
    IDCLI_CONFIG_DIR: configDir,
    BROWSER: join(ROOT, 'test', 'support', 'http-browser.mjs'),
    ...extra,
  });
}

describe('the npm package', () => {
  it('contains only what users need', () => {
    expect(packedFiles).toContain('package.json');
    expect(packedFiles).toContain('README.md');
    expect(packedFiles).toContain('bin/idcli.cjs');
    expect(packedFiles).toContain('LICENSE');
    // The README links to the full reference.
    expect(packedFiles).toContain('docs/cli.md');
    expect(packedFiles).toContain('dist/cli.cjs');
    // Dependencies are installed beside the package, not bundled into it.
    for (const f of packedFiles)
      expect(f, f).toMatch(
        /^(package\.json|README\.md|docs\/cli\.md|LICENSE|bin\/idcli\.cjs|dist\/[\w.-]+\.cjs|dist\/help\.txt)$/,
      );
  });

  it('installed into a fresh prefix: --version, --help, login and list through the installed binary', async () => {
    const prefix = join(tmp.path, 'prefix');
    const bin = await install(prefix);
    const env = cliEnv(join(tmp.path, 'cfg'), { IDCLI_CREDENTIAL_STORE: 'file' });
    const version = await run(bin, ['--version'], env);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const help = await run(bin, ['--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: idcli');
    // undici and open come from the package's own dependencies, installed with it.
    const installed = join(prefix, 'lib', 'node_modules', 'idcli');
    const from = createRequire(join(installed, 'dist', 'cli.cjs'));
    for (const dep of ['undici', 'open']) expect(from.resolve(dep), dep).toContain(installed);

    const login = await run(bin, ['login', '--timeout', '60'], env);
    expect(login.stderr).toContain('Signed in as');
    expect(login.code).toBe(0);
    const list = await run(bin, ['list', '/v1/users', '--limit', '3'], env);
    expect(list.code).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[0]!)).toHaveProperty('id');
  }, 240_000);

  it('without the optional keyring binary: the file store, announced by a warning', async () => {
    // A platform with no prebuilt binary ends up with the keyring package but none of its platform packages.
    const prefix = join(tmp.path, 'prefix');
    const bin = join(prefix, 'bin', 'idcli');
    const modules = join(prefix, 'lib', 'node_modules', 'idcli', 'node_modules', '@napi-rs');
    const platformPackages = (await readdir(modules)).filter((p) => p.startsWith('keyring-'));
    expect(platformPackages.length).toBeGreaterThan(0);
    for (const p of platformPackages) await rm(join(modules, p), { recursive: true, force: true });
    const env = cliEnv(join(tmp.path, 'cfg-no-optional'), { IDCLI_CREDENTIAL_STORE: 'auto' });
    const login = await run(bin, ['login', '--timeout', '60'], env);
    expect(login.code).toBe(0);
    expect(login.stderr).toMatch(/warning: .*keychain/i);
    const token = await run(bin, ['token'], env);
    expect(token.code).toBe(0);
    expect(token.stdout.trim().length).toBeGreaterThan(20);
  }, 240_000);
});

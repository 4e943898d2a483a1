/**
 * Shared set-up of the sign-in integration tests: a strict emulator on port 0, a fresh config directory, the
 * HTTP "browser" as $BROWSER, and helpers to run the BUILT CLI and to look for leaked secrets in its output.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import { FileStore } from '../../src/store/file-store.js';
import type { CredentialKey, CredentialRecord } from '../../src/store/record.js';
import { type Emulator, type EmulatorOptions, startEmulator } from '../emulator/index.js';
import { baseEnv, type CliOptions, type CliResult, ROOT, runCli, tempDir } from '../support/cli.js';

export const HTTP_BROWSER = join(ROOT, 'test', 'support', 'http-browser.mjs');

export interface Harness {
  emu: Emulator;
  dir: string;
  /** The CLI's environment: emulator settings, file store, the HTTP browser; `extra` overrides (undefined removes). */
  env(extra?: Record<string, string | undefined>): Record<string, string | undefined>;
  run(args: string[], extra?: Record<string, string | undefined>, opts?: Omit<CliOptions, 'env'>): Promise<CliResult>;
  /** Every run's output so far, for the leak check. */
  outputs: string[];
  record(profile?: string): Promise<CredentialRecord | null>;
  /** Replace the stored record, e.g. to make its access token look old. */
  writeRecord(record: CredentialRecord, profile?: string): Promise<void>;
  key(profile?: string): CredentialKey;
  close(): Promise<void>;
}

export interface HarnessOptions extends EmulatorOptions {
  /** The redirect URI idcli is configured with; default a free port on 127.0.0.1. */
  redirectUri?: string;
}

export async function harness(opts: HarnessOptions = {}): Promise<Harness> {
  const { redirectUri = 'http://127.0.0.1:0/callback', ...emuOpts } = opts;
  const emu = await startEmulator({
    loopbackAnyPort: true,
    callbackUrl: redirectUri.replace(/:0\//, ':8765/'),
    ...emuOpts,
  });
  const tmp = await tempDir('idcli-auth-');
  const outputs: string[] = [];
  const env = (extra: Record<string, string | undefined> = {}) =>
    baseEnv({
      IDCLI_BASE_URL: emu.baseUrl,
      IDCLI_CLIENT_ID: emu.client.id,
      IDCLI_CLIENT_NAME: emu.client.name,
      IDCLI_REDIRECT_URI: redirectUri,
      IDCLI_CONFIG_DIR: join(tmp.path, 'config'),
      IDCLI_CREDENTIAL_STORE: 'file',
      BROWSER: HTTP_BROWSER,
      HTTP_BROWSER_LOG: join(tmp.path, 'browser.log'),
      HTTP_BROWSER_COOKIES: join(tmp.path, 'cookies.json'),
      ...extra,
    });
  const key = (profile = 'default'): CredentialKey => ({ baseUrl: emu.baseUrl, clientId: emu.client.id, profile });
  return {
    emu,
    dir: tmp.path,
    env,
    outputs,
    key,
    async run(args, extra = {}, runOpts = {}) {
      const r = await runCli(args, { timeoutMs: 60_000, ...runOpts, env: env(extra) });
      outputs.push(r.stdout, r.stderr);
      return r;
    },
    record: (profile) => new FileStore({ configDir: join(tmp.path, 'config') }).read(key(profile)),
    writeRecord: (record, profile) =>
      new FileStore({ configDir: join(tmp.path, 'config') }).write(key(profile), record),
    async close() {
      await emu.close();
      await tmp.cleanup();
    },
  };
}

/**
 * No secret the emulator issued or received (codes, tokens, verifiers) appears in `texts`, except `allowed`
 * (the access tokens `idcli token` prints by design).
 */
export function expectNoSecrets(h: Harness, allowed: readonly string[] = []): void {
  const secrets = h.emu.secrets().filter((s) => !allowed.includes(s));
  expect(secrets.length).toBeGreaterThan(0);
  const all = h.outputs.join('\n');
  for (const s of secrets) {
    if (all.includes(s)) throw new Error(`a secret (${s.slice(0, 4)}…) leaked into the CLI output`);
  }
}

/** Sign in through the HTTP browser; fails the test when it does not work. */
export async function login(
  h: Harness,
  args: string[] = [],
  extra: Record<string, string | undefined> = {},
): Promise<CliResult> {
  const r = await h.run(['login', '--timeout', '30', ...args], extra);
  expect(r.stderr).toContain('Signed in');
  expect(r.code).toBe(0);
  return r;
}

/** Runs the HTTP browser ourselves, e.g. on a URL taken from `login --no-browser`. */
export function browse(url: string, env: Record<string, string | undefined>): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HTTP_BROWSER, url], {
      env: Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv,
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code));
  });
}

/** The sign-in URL that login prints on stderr. */
export function authorizeUrlIn(stderr: string): URL | undefined {
  const m = /(http:\/\/\S+\/oauth\/authorize\?\S+)/.exec(stderr);
  return m?.[1] ? new URL(m[1]) : undefined;
}

export async function until<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  ms = 20_000,
  what = 'condition',
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The query of every authorize request the emulator saw. */
export function authorizeQueries(emu: Emulator): URLSearchParams[] {
  return emu.requests.filter((r) => r.path === '/oauth/authorize').map((r) => new URL(r.url, emu.baseUrl).searchParams);
}

export function tokenForms(emu: Emulator): Record<string, string>[] {
  return emu.requests.filter((r) => r.path === '/oauth/token').map((r) => r.form ?? {});
}

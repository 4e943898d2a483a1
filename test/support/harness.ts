/**
 * Shared set-up of the sign-in integration tests: a strict emulator on port 0, a fresh config directory, the
 * HTTP "browser" as $BROWSER, and helpers to run a command (in this process, or the BUILT CLI as a child process)
 * and to look for leaked secrets in its output.
 */
import { execFile, spawn } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { FileStore } from '../../src/store/file-store.js';
import type { CredentialStore } from '../../src/store/interface.js';
import { KeychainStore } from '../../src/store/keychain-store.js';
import { lockPathFor, withLock } from '../../src/store/lock.js';
import { accountName, type CredentialKey, type CredentialRecord } from '../../src/store/record.js';
import { createPkcePair } from '../../src/oauth/pkce.js';
import { type Emulator, type EmulatorOptions, startEmulator } from '../emulator/index.js';
import { baseEnv, type CliOptions, type CliResult, nodeScript, ROOT, runCli, tempDir } from './cli.js';
import type { CommandOptions } from './run-command.js';
import { type Scheme, schemeSetup } from './scheme.js';

/**
 * The CLI's own modules, loaded on the first run in process: a file whose tests only start the built CLI as a
 * process does not pay for loading them.
 */
const inProcess = () => import('./run-command.js');

export const HTTP_BROWSER = join(ROOT, 'test', 'support', 'http-browser.mjs');

/** The credential stores every store-dependent behaviour is tested with. */
export const STORE_KINDS = ['file', 'keychain'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/**
 * The real keychain is there inside `scripts/with-keyring.sh` (IDCLI_TEST_KEYRING=1); CI demands it
 * (IDCLI_REQUIRE_KEYCHAIN=1), so there a missing keyring fails these tests instead of skipping them.
 */
export const KEYCHAIN_TESTABLE = process.env.IDCLI_TEST_KEYRING === '1' || process.env.IDCLI_REQUIRE_KEYCHAIN === '1';

/** Declares the suite once per credential store, e.g. `concurrent refreshes (keychain store)`. */
export function describeEachStore(name: string, suite: (store: StoreKind) => void): void {
  for (const store of STORE_KINDS) {
    describe.skipIf(store === 'keychain' && !KEYCHAIN_TESTABLE)(`${name} (${store} store)`, () => suite(store));
  }
}

export interface Harness {
  emu: Emulator;
  dir: string;
  /** Where the CLI keeps the sign-in: IDCLI_CREDENTIAL_STORE of every run. */
  store: StoreKind;
  /** Over https, the SPKI hash of the emulator's certificate, for a browser that does not read NODE_EXTRA_CA_CERTS. */
  spki: string | undefined;
  /** The CLI's environment: emulator settings, file store, the HTTP browser; `extra` overrides (undefined removes). */
  env(extra?: Record<string, string | undefined>): Record<string, string | undefined>;
  run(args: string[], extra?: Record<string, string | undefined>, opts?: Omit<CliOptions, 'env'>): Promise<CliResult>;
  /** As run(), but in this process (test/support/run-command.ts): for what a command does, not what a process does. */
  command(
    args: string[],
    extra?: Record<string, string | undefined>,
    opts?: Omit<CommandOptions, 'env' | 'configDir'>,
  ): Promise<CliResult>;
  /** Every run's output so far, for the leak check. */
  outputs: string[];
  record(profile?: string): Promise<CredentialRecord | null>;
  /** Replace the stored record, e.g. to make its access token look old. */
  writeRecord(record: CredentialRecord, profile?: string): Promise<void>;
  /** Overwrite the stored record with cut-off bytes, as a store damaged outside idcli would hold it. */
  damageRecord(): Promise<void>;
  key(profile?: string): CredentialKey;
  close(): Promise<void>;
}

export interface HarnessOptions extends EmulatorOptions {
  /** The redirect URI idcli is configured with; default a free port on 127.0.0.1. */
  redirectUri?: string;
  /** The credential store of every run (default file); a keychain harness uses a service name of its own. */
  store?: StoreKind;
  /** The emulator's scheme (default http); over https with a CA made for the harness, trusted by every run. */
  scheme?: Scheme;
}

export async function harness(opts: HarnessOptions = {}): Promise<Harness> {
  const { redirectUri = 'http://127.0.0.1:0/callback', store = 'file', scheme = 'http', ...emuOpts } = opts;
  const tmp = await tempDir('idcli-auth-');
  const over = schemeSetup(scheme, tmp.path);
  const emu = await startEmulator({
    loopbackAnyPort: true,
    callbackUrl: redirectUri.replace(/:0\//, ':8765/'),
    ...(over.tls ? { tls: over.tls } : {}),
    ...emuOpts,
  });
  const outputs: string[] = [];
  const configDir = join(tmp.path, 'config');
  const service = `idcli-auth-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  // The test reads and writes the record through the same store as the CLI, in this process; a patient timeout,
  // because a loaded test machine can make gnome-keyring slow, and these tests are not about its timeout.
  const records: CredentialStore =
    store === 'keychain' ? new KeychainStore({ service, timeoutMs: 20_000 }) : new FileStore({ configDir });
  const env = (extra: Record<string, string | undefined> = {}) =>
    baseEnv({
      IDCLI_BASE_URL: emu.baseUrl,
      IDCLI_CLIENT_ID: emu.client.id,
      IDCLI_CLIENT_NAME: emu.client.name,
      IDCLI_REDIRECT_URI: redirectUri,
      IDCLI_CONFIG_DIR: configDir,
      IDCLI_CREDENTIAL_STORE: store,
      IDCLI_KEYCHAIN_SERVICE: service,
      BROWSER: nodeScript(HTTP_BROWSER),
      HTTP_BROWSER_LOG: join(tmp.path, 'browser.log'),
      HTTP_BROWSER_COOKIES: join(tmp.path, 'cookies.json'),
      ...over.env,
      ...extra,
    });
  const key = (profile = 'default'): CredentialKey => ({ baseUrl: emu.baseUrl, clientId: emu.client.id, profile });
  return {
    emu,
    dir: tmp.path,
    store,
    spki: over.tls?.spki,
    env,
    outputs,
    key,
    async run(args, extra = {}, runOpts = {}) {
      const r = await runCli(args, { timeoutMs: 60_000, ...runOpts, env: env(extra) });
      outputs.push(r.stdout, r.stderr);
      return r;
    },
    async command(args, extra = {}, commandOpts = {}) {
      const { runCommand } = await inProcess();
      const r = await runCommand(args, { ...commandOpts, env: env(extra) });
      outputs.push(r.stdout, r.stderr);
      return r;
    },
    record: (profile) => records.read(key(profile)),
    writeRecord: (record, profile) => records.write(key(profile), record),
    async damageRecord() {
      if (records instanceof KeychainStore) {
        await records.backend.set(accountName(key()), Buffer.from('{"format":"idcli-credential-head","v":1,"gen'));
        return;
      }
      const dir = join(configDir, 'credentials');
      const [file] = (await readdir(dir)).filter((f) => f.endsWith('.json'));
      await writeFile(join(dir, file!), '{"version":1,"refreshTok');
    },
    async close() {
      if (records instanceof KeychainStore) {
        records.close();
        // Every entry of this harness's service, whatever profile or chunk it belongs to.
        await new Promise((resolve) => execFile('secret-tool', ['clear', 'service', service], resolve));
      }
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

/** Sign in through the HTTP browser, in this process unless `how` asks for the built CLI; fails the test if it fails. */
export async function login(
  h: Harness,
  args: string[] = [],
  extra: Record<string, string | undefined> = {},
  how: 'run' | 'command' = 'command',
): Promise<CliResult> {
  const r = await h[how](['login', '--timeout', '30', ...args], extra);
  expect(r.stderr).toContain('Signed in');
  expect(r.code).toBe(0);
  return r;
}

export interface StoredLogin {
  profile?: string;
  /** How long the access token stays valid, in seconds (below zero: expired); default the emulator's expires_in. */
  ttlSec?: number;
  /** Where to write instead of the harness's own store, e.g. an etcd fleet's; the caller closes it. */
  store?: CredentialStore;
}

/** What login does with an expires_in of more than a year (src/oauth/token-client.ts). */
const YEAR_SEC = 365 * 24 * 60 * 60;

/**
 * A sign-in stored as `idcli login` leaves it, without the browser flow: tokens the emulator minted with the Serial
 * PKCE challenge whose verifier the record keeps, so the next refresh is valid. For tests where the sign-in is only
 * set-up; a test of the login itself, its authorization request or its code grant signs in with login().
 */
export async function storeLogin(h: Harness, o: StoredLogin = {}): Promise<CredentialRecord> {
  const pair = createPkcePair();
  const now = Date.now();
  const t = h.emu.mintTokens({ nextChallenge: pair.challenge });
  const record: CredentialRecord = {
    version: 1,
    accessToken: t.access_token,
    tokenType: t.token_type,
    expiresAt: now + (o.ttlSec ?? Math.min(t.expires_in, YEAR_SEC)) * 1000,
    codeVerifier: pair.verifier,
    refreshToken: t.refresh_token,
    idToken: t.id_token,
    scope: t.scope,
    updatedAt: now,
    // A first login over no record.
    generation: 1,
  };
  // Under the lock login takes, which leaves the config directory as login does: its locks directory there.
  const key = h.key(o.profile);
  const write = () => (o.store ? o.store.write(key, record, { signIn: true }) : h.writeRecord(record, o.profile));
  if (o.store?.withLock) await o.store.withLock(key, write, {});
  else await withLock(lockPathFor(join(h.dir, 'config'), key), write);
  return record;
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

/** The query of every authorize request the emulator saw. */
export function authorizeQueries(emu: Emulator): URLSearchParams[] {
  return emu.requests.filter((r) => r.path === '/oauth/authorize').map((r) => new URL(r.url, emu.baseUrl).searchParams);
}

/** The refresh grants the emulator answered, in order. */
export function refreshGrants(h: Harness): Emulator['tokenEvents'] {
  return h.emu.tokenEvents.filter((e) => e.grant === 'refresh_token');
}

export function tokenForms(emu: Emulator): Record<string, string>[] {
  return emu.requests.filter((r) => r.path === '/oauth/token').map((r) => r.form ?? {});
}

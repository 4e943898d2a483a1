/**
 * The TokenSource that `list` relies on, driven in-process against the emulator and each real store (the file and
 * the keychain): the 401 path (`refresh(rejected)`) and the invalid_grant rules.
 */
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Settings } from '../../src/config.js';
import type { Deps } from '../../src/deps.js';
import { IdcliError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { createPkcePair } from '../../src/oauth/pkce.js';
import { openSession, type Session, storeOptions } from '../../src/oauth/session.js';
import type { CredentialStore } from '../../src/store/interface.js';
import { KeychainStore } from '../../src/store/keychain-store.js';
import { openStore } from '../../src/store/select.js';
import type { CredentialKey, CredentialRecord } from '../../src/store/record.js';
import { type Emulator, startEmulator } from '../emulator/index.js';
import { tempDir } from '../support/cli.js';
import { describeEachStore, type StoreKind } from '../support/harness.js';
import { until } from '../support/until.js';

let emu: Emulator;
let dir: { path: string; cleanup: () => Promise<void> };
let store: CredentialStore;
let key: CredentialKey;
let session: Session;
let stderr: string;

let services = 0;

/** An emulator, a config directory and a session whose sign-in is kept in `kind`, as `list` opens it. */
async function setUp(kind: StoreKind): Promise<void> {
  emu = await startEmulator();
  dir = await tempDir('idcli-session-');
  key = { baseUrl: emu.baseUrl, clientId: emu.client.id, profile: 'default' };
  stderr = '';
  const err = new PassThrough();
  err.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  const out = new PassThrough();
  const deps: Deps = {
    // The keychain is reached over this process's private session bus (scripts/with-keyring.sh).
    env: { DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS },
    stdout: out,
    stderr: err,
    print: (text) => out.write(text),
    log: createLogger(err, { verbose: true, quiet: false }),
    now: Date.now,
    startedAt: Date.now(),
    signal: new AbortController().signal,
    mustFinish: (_task, work) => work(),
  };
  const settings: Settings = {
    profile: 'default',
    configDir: dir.path,
    baseUrl: emu.baseUrl,
    clientId: emu.client.id,
    httpTimeoutMs: 300_000,
    httpCompression: true,
    credentialStore: kind,
    // Each test's sign-in in a keychain service of its own, so no test reads another's.
    keychainService: `idcli-session-test-${process.pid}-${++services}`,
    etcdPrefix: '/idcli/',
    pageSize: () => 'auto',
  };
  store = await openStore(storeOptions({ deps, settings }));
  session = await openSession({ deps, settings });
}

async function tearDown(): Promise<void> {
  await store.delete(key);
  if (store instanceof KeychainStore) store.close();
  await emu.close();
  await dir.cleanup();
}

/** A signed-in record as a code exchange with a next challenge would leave it. */
async function signedIn(generation = 1): Promise<CredentialRecord & { accessToken: string }> {
  const next = createPkcePair();
  const t = emu.mintTokens({ nextChallenge: next.challenge });
  const record: CredentialRecord & { accessToken: string } = {
    version: 1,
    accessToken: t.access_token,
    tokenType: t.token_type,
    expiresAt: Date.now() + t.expires_in * 1000,
    refreshToken: t.refresh_token,
    codeVerifier: next.verifier,
    idToken: t.id_token,
    scope: t.scope,
    updatedAt: Date.now(),
    generation,
  };
  await store.write(key, record);
  return record;
}

describeEachStore('Session', (kind) => {
  beforeEach(() => setUp(kind));
  afterEach(tearDown);

  it('serves the cached token, then refreshes for a 401', async () => {
    const r1 = await signedIn();
    expect(await session.get()).toBe(r1.accessToken);
    expect(emu.tokenEvents).toHaveLength(0);
    const fresh = await session.refresh(r1.accessToken);
    expect(fresh).not.toBe(r1.accessToken);
    expect((await store.read(key))?.accessToken).toBe(fresh);
    expect(emu.tokenEvents).toEqual([expect.objectContaining({ grant: 'refresh_token', ok: true })]);
    // A second 401 for the old token: the stored one already differs, so no second refresh.
    expect(await session.refresh(r1.accessToken)).toBe(fresh);
    expect(emu.tokenEvents).toHaveLength(1);
  });

  it('uses a record that changed while its refresh was being refused', async () => {
    const r1 = await signedIn();
    // The refresh is held at the server long enough for the test to act while it is under way.
    emu.inject({ path: '/oauth/token', fault: { kind: 'latency', ms: 3000 } });
    const pending = session.refresh(r1.accessToken);
    await until(() => (emu.requests.some((q) => q.path === '/oauth/token') ? true : undefined), 10_000, 'the refresh');
    // Meanwhile the old sign-in is revoked and a new one is saved by a writer that ignored the lock.
    emu.revokeAll();
    const r2 = await signedIn(r1.generation + 5);
    expect(await pending).toBe(r2.accessToken);
    expect(await store.read(key)).toEqual(r2);
    expect(stderr).toContain('the stored sign-in changed meanwhile');
  });

  it('tries a record that changed during a refused refresh once only: a second refusal asks for a login', async () => {
    const r1 = await signedIn();
    const holds = [0, 1].map(() => {
      let resolve!: () => void;
      return { promise: new Promise<void>((r) => (resolve = r)), resolve: () => resolve() };
    });
    holds.forEach((h, i) =>
      emu.inject({ path: '/oauth/token', nth: i + 1, fault: { kind: 'hold', until: h.promise } }),
    );
    const refreshes = () => emu.requests.filter((q) => q.path === '/oauth/token').length;
    const pending = session.refresh(r1.accessToken).catch((e: unknown) => e);
    // Twice, while a refresh is held at the server: the sign-in it sends is revoked, and another writer (ignoring the
    // lock) stores a newer one whose access token has expired, so that only a refresh could serve it.
    let latest = r1;
    for (const [i, hold] of holds.entries()) {
      await until(() => (refreshes() === i + 1 ? true : undefined), 10_000, `refresh ${i + 1}`);
      emu.revokeAll();
      latest = { ...(await signedIn(latest.generation + 5)), expiresAt: Date.now() - 1000 };
      await store.write(key, latest);
      hold.resolve();
    }
    const err = await pending;
    expect(err).toBeInstanceOf(IdcliError);
    expect((err as IdcliError).exitCode).toBe(3);
    expect(refreshes()).toBe(2);
    // Not the sign-in it was refused with: the last one stored is left for its writer.
    expect(await store.read(key)).toEqual(latest);
  });

  it('clears a refused sign-in and asks for a login', async () => {
    const r1 = await signedIn();
    emu.revokeAll();
    const err = await session.refresh(r1.accessToken).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdcliError);
    expect((err as IdcliError).exitCode).toBe(3);
    expect((err as IdcliError).hint).toBe('run `idcli login`');
    expect(await store.read(key)).toBeNull();
    // Nothing secret reached the log, even with --verbose.
    for (const s of emu.secrets()) expect(stderr).not.toContain(s);
  });

  it('is not logged in without a record', async () => {
    await expect(session.get()).rejects.toMatchObject({ exitCode: 3, message: 'not logged in' });
  });
});

describe('openSession', () => {
  beforeEach(() => setUp('file'));
  afterEach(tearDown);

  it('needs base-url and client-id', async () => {
    const out = new PassThrough();
    const deps = {
      env: {},
      stdout: out,
      stderr: new PassThrough(),
      print: (text: string) => out.write(text),
      now: Date.now,
      startedAt: Date.now(),
      signal: new AbortController().signal,
      mustFinish: <T>(_task: unknown, work: () => Promise<T>) => work(),
    };
    const log = createLogger(new PassThrough(), { verbose: false, quiet: false });
    const settings: Settings = {
      profile: 'p',
      configDir: join(dir.path, 'x'),
      credentialStore: 'file',
      keychainService: 's',
      etcdPrefix: '/idcli/',
      httpTimeoutMs: 300_000,
      httpCompression: true,
      pageSize: () => 'auto',
      baseUrl: emu.baseUrl,
    };
    await expect(openSession({ deps: { ...deps, log }, settings })).rejects.toMatchObject({
      exitCode: 2,
      message: 'client-id is not set',
    });
  });
});

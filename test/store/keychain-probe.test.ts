/**
 * The Secret Service probe that runs before @napi-rs/keyring may connect in process. Fake buses (real Unix
 * sockets speaking D-Bus, see fixtures/fake-bus.ts) stand for the ways a session goes wrong; the real session bus
 * of scripts/with-keyring.sh for a healthy one.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, IdcliError } from '../../src/errors.js';
import { sessionBusEndpoints } from '../../src/store/dbus.js';
import { KeyringClient } from '../../src/store/keyring-client.js';
import {
  listSecretServiceAccounts,
  probeSecretService,
  readSecretServiceSecret,
} from '../../src/store/secret-service.js';
import { type FakeBus, type FakeBusMode, STORED_SECRET, startFakeBus } from './fixtures/fake-bus.js';
import { tempDir } from './support.js';

const HAVE_KEYRING = process.env.IDCLI_TEST_KEYRING === '1';
const GUID = 'guid=0123456789abcdef0123456789abcdef';

describe('sessionBusEndpoints (where libdbus would connect)', () => {
  it('reads unix:path and unix:abstract addresses, ignoring the other keys', () => {
    expect(sessionBusEndpoints({ DBUS_SESSION_BUS_ADDRESS: `unix:path=/run/user/1000/bus,${GUID}` })).toEqual([
      { path: '/run/user/1000/bus', display: '/run/user/1000/bus' },
    ]);
    expect(sessionBusEndpoints({ DBUS_SESSION_BUS_ADDRESS: `unix:abstract=/tmp/dbus-AbC123,${GUID}` })).toEqual([
      { path: '\0/tmp/dbus-AbC123', display: '@/tmp/dbus-AbC123' },
    ]);
  });

  it('undoes %-escaping in values', () => {
    expect(sessionBusEndpoints({ DBUS_SESSION_BUS_ADDRESS: 'unix:path=/tmp/with%20space%2cand%3bmore' })).toEqual([
      { path: '/tmp/with space,and;more', display: '/tmp/with space,and;more' },
    ]);
  });

  it('keeps the order of several addresses and marks transports it does not speak', () => {
    expect(
      sessionBusEndpoints({
        DBUS_SESSION_BUS_ADDRESS: 'unix:path=/a;tcp:host=localhost,port=4;unix:runtime=yes;;unix:abstract=b',
      }),
    ).toEqual([{ path: '/a', display: '/a' }, null, null, { path: '\0b', display: '@b' }]);
    expect(sessionBusEndpoints({ DBUS_SESSION_BUS_ADDRESS: 'launchd:env=DBUS_LAUNCHD_SESSION_BUS_SOCKET' })).toEqual([
      null,
    ]);
  });

  it('falls back to $XDG_RUNTIME_DIR/bus without an address, and to nothing without either', () => {
    expect(sessionBusEndpoints({ XDG_RUNTIME_DIR: '/run/user/7' })).toEqual([
      { path: '/run/user/7/bus', display: '/run/user/7/bus' },
    ]);
    expect(sessionBusEndpoints({ DBUS_SESSION_BUS_ADDRESS: '', XDG_RUNTIME_DIR: '/run/user/7' })).toHaveLength(1);
    expect(sessionBusEndpoints({})).toEqual([]);
  });
});

describe.runIf(process.platform === 'linux')('probeSecretService against fake buses', () => {
  const service = 'idcli-probe-test';
  let dir: { path: string; cleanup: () => Promise<void> };
  let buses: FakeBus[];

  beforeEach(async () => {
    dir = await tempDir();
    buses = [];
  });
  afterEach(async () => {
    for (const bus of buses) await bus.close();
    await dir.cleanup();
  });

  async function fake(mode: FakeBusMode, opts: { abstract?: boolean } = {}): Promise<FakeBus> {
    const bus = await startFakeBus(dir.path, mode, opts);
    buses.push(bus);
    return bus;
  }

  async function timed(address: string, timeoutMs: number) {
    const started = Date.now();
    const result = await probeSecretService({ env: { DBUS_SESSION_BUS_ADDRESS: address }, service, timeoutMs });
    return { result, elapsed: Date.now() - started };
  }

  const timeout = { status: 'unavailable', reason: 'keychain did not answer within 0.4 s' };

  it('gives up on a socket that accepts the connection and never answers, after the timeout', async () => {
    const bus = await fake('silent');
    const { result, elapsed } = await timed(bus.address, 400);
    expect(result).toEqual(timeout);
    expect(elapsed).toBeGreaterThanOrEqual(380);
    expect(elapsed).toBeLessThan(5000);
    expect(bus.connections).toBe(1);
    await sleep(50);
    expect(bus.open).toBe(0); // the probe hung up
  });

  it('gives up on a bus that authenticates and then ignores Hello', async () => {
    const bus = await fake('auth-only');
    const { result, elapsed } = await timed(bus.address, 400);
    expect(result).toEqual(timeout);
    expect(elapsed).toBeGreaterThanOrEqual(380);
    expect(elapsed).toBeLessThan(5000);
    expect(bus.calls[0]).toBe('org.freedesktop.DBus org.freedesktop.DBus.Hello');
  });

  it('gives up on a bus whose Secret Service never answers, though Hello was answered', async () => {
    const bus = await fake('hello-only');
    const { result, elapsed } = await timed(bus.address, 400);
    expect(result).toEqual(timeout);
    expect(elapsed).toBeGreaterThanOrEqual(380);
    expect(elapsed).toBeLessThan(5000);
    expect(bus.calls).toContain('org.freedesktop.secrets org.freedesktop.DBus.Properties.Get'); // asked, never answered
  });

  it('says at once that nobody owns the Secret Service name', async () => {
    const bus = await fake('no-secret-service');
    const { result, elapsed } = await timed(bus.address, 10_000);
    expect(result).toEqual({
      status: 'unavailable',
      reason: 'no Secret Service on the D-Bus session bus (org.freedesktop.DBus.Error.ServiceUnknown)',
    });
    expect(elapsed).toBeLessThan(5000);
  });

  it('tries once more when the Secret Service answers a call with an error, and reports a second one', async () => {
    const once = await fake('errs-once');
    expect((await timed(once.address, 10_000)).result).toEqual({ status: 'ready', writable: true });
    expect(once.connections).toBe(2);
    const always = await fake('errs-always');
    const { result } = await timed(always.address, 10_000);
    expect(result).toMatchObject({
      status: 'unavailable',
      reason: 'the Secret Service failed ReadAlias (org.freedesktop.DBus.Error.UnknownMethod)',
    });
    expect(always.connections).toBe(2);
  });

  it('a direct read tries once more too, and opens a plain session only for it', async () => {
    const bus = await fake('search-errs-once');
    const env = { DBUS_SESSION_BUS_ADDRESS: bus.address };
    expect(await readSecretServiceSecret({ env, service, account: 'someone', timeoutMs: 10_000 })).toEqual({
      status: 'done',
      secret: null,
    });
    expect(bus.connections).toBe(2);
    expect(bus.calls.filter((c) => c.endsWith('.SearchItems'))).toHaveLength(2);
    expect(bus.calls.filter((c) => c.endsWith('.OpenSession'))).toHaveLength(2);
    // No item: nothing to ask a secret of.
    expect(bus.calls.filter((c) => c.endsWith('.GetSecret'))).toEqual([]);
  });

  it('refuses a locked keyring, which would make the library wait for an unlock prompt', async () => {
    const { result } = await timed((await fake('locked')).address, 10_000);
    expect(result).toEqual({
      status: 'unavailable',
      reason: 'the keyring is locked (unlock it, e.g. by signing in to the desktop)',
    });
  });

  it('refuses a keyring without a default collection, where the first write would prompt to create one', async () => {
    const { result } = await timed((await fake('no-default-collection')).address, 10_000);
    expect(result).toEqual({ status: 'unavailable', reason: 'the keyring has no default collection' });
  });

  it('finds a healthy, unlocked Secret Service ready, asking only what it needs, and hangs up', async () => {
    const bus = await fake('stalls-after-open-session');
    const { result, elapsed } = await timed(bus.address, 10_000);
    expect(result).toEqual({ status: 'ready', writable: true });
    expect(elapsed).toBeLessThan(5000);
    expect(bus.calls).toEqual([
      'org.freedesktop.DBus org.freedesktop.DBus.Hello',
      'org.freedesktop.secrets org.freedesktop.DBus.Properties.Get',
      'org.freedesktop.secrets org.freedesktop.Secret.Service.SearchItems',
      'org.freedesktop.secrets org.freedesktop.Secret.Service.ReadAlias',
      'org.freedesktop.secrets org.freedesktop.DBus.Properties.Get',
    ]);
    await sleep(50);
    expect(bus.open).toBe(0);
  });

  const HELLO = 'org.freedesktop.DBus org.freedesktop.DBus.Hello';
  const SERVICE = 'org.freedesktop.secrets org.freedesktop.Secret.Service';
  const GET = 'org.freedesktop.secrets org.freedesktop.DBus.Properties.Get';
  const LOCKED = 'the keyring is locked (unlock it, e.g. by signing in to the desktop)';

  it('asked to read an account it finds, asks no more: what a write needs is checked when not', async () => {
    const bus = await fake('stores-item');
    const env = { DBUS_SESSION_BUS_ADDRESS: bus.address };
    expect(await probeSecretService({ env, service, timeoutMs: 10_000, read: 'someone' })).toEqual({
      status: 'ready',
      secret: Buffer.from(STORED_SECRET),
      writable: false,
    });
    expect(bus.calls).toEqual([
      HELLO,
      GET,
      `${SERVICE}.SearchItems`,
      `${SERVICE}.OpenSession`,
      'org.freedesktop.secrets org.freedesktop.Secret.Item.GetSecret',
    ]);
    // Without an account to read, the default collection is looked at, and this one is locked.
    expect(await probeSecretService({ env, service, timeoutMs: 10_000 })).toEqual({
      status: 'unavailable',
      reason: LOCKED,
    });
    expect(bus.calls.slice(5)).toEqual([HELLO, GET, `${SERVICE}.SearchItems`, `${SERVICE}.ReadAlias`, GET]);
  });

  it('KeyringClient: a locked default collection makes the keychain unavailable before anything is read', async () => {
    const bus = await fake('stores-item');
    // The library only ever uses this process's own session bus: this one, for this test.
    const saved = process.env.DBUS_SESSION_BUS_ADDRESS;
    process.env.DBUS_SESSION_BUS_ADDRESS = bus.address;
    try {
      const client = new KeyringClient({ service, timeoutMs: 5000 });
      // Nothing read at probe time is handed out later: the probe only checks, every read asks the keychain anew.
      const refused = await client.get('someone').catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(IdcliError);
      expect((refused as IdcliError).exitCode).toBe(ExitCode.USAGE);
      expect((refused as IdcliError).message).toBe(LOCKED);
      // The checks' own conversation, and nothing of the library's (it would open a session of its own).
      expect(bus.calls).toEqual([HELLO, GET, `${SERVICE}.SearchItems`, `${SERVICE}.ReadAlias`, GET]);
      expect(bus.connections).toBe(1);
    } finally {
      if (saved === undefined) delete process.env.DBUS_SESSION_BUS_ADDRESS;
      else process.env.DBUS_SESSION_BUS_ADDRESS = saved;
    }
  });

  it('asks the Secret Service first what needs no record of the caller, and waits for the answer', async () => {
    // gnome-keyring on a busy machine: see records-callers-late in fixtures/fake-bus.ts. Calls that need the
    // record, sent with the first, would be refused, answered wrongly, or bring the service down.
    const bus = await fake('records-callers-late');
    const env = { DBUS_SESSION_BUS_ADDRESS: bus.address };
    expect(await probeSecretService({ env, service, timeoutMs: 10_000, read: 'someone' })).toEqual({
      status: 'ready',
      secret: null,
      writable: true,
    });
    expect(await probeSecretService({ env, service, timeoutMs: 10_000 })).toEqual({ status: 'ready', writable: true });
    expect(await readSecretServiceSecret({ env, service, account: 'someone', timeoutMs: 10_000 })).toEqual({
      status: 'done',
      secret: null,
    });
    expect(await listSecretServiceAccounts({ env, service, timeoutMs: 10_000 })).toEqual([]);
    expect(bus.connections).toBe(4); // each answered the first time
    expect(bus.calls.filter((c) => c === HELLO)).toHaveLength(4);
    expect(bus.calls.slice(0, 2)).toEqual([HELLO, GET]);
  });

  it('reaches a bus on an abstract socket', async () => {
    const bus = await fake('stalls-after-open-session', { abstract: true });
    expect(bus.address).toMatch(/^unix:abstract=/);
    expect((await timed(bus.address, 10_000)).result).toEqual({ status: 'ready', writable: true });
  });

  it('tries the addresses in order, like libdbus, and names the socket it could not reach', async () => {
    const absent = join(dir.path, 'absent.sock');
    const bus = await fake('stalls-after-open-session');
    expect((await timed(`unix:path=${absent};${bus.address}`, 10_000)).result).toEqual({
      status: 'ready',
      writable: true,
    });
    expect((await timed(`unix:path=${absent}`, 10_000)).result).toEqual({
      status: 'unavailable',
      reason: `cannot connect to the D-Bus session bus at ${absent} (ENOENT)`,
    });
  });

  it('leaves transports and authentication it does not speak to the library, and reports a missing bus', async () => {
    expect((await timed('tcp:host=127.0.0.1,port=1', 10_000)).result).toEqual({ status: 'unchecked' });
    const { result, elapsed } = await timed((await fake('rejects-external')).address, 10_000);
    expect(result).toEqual({ status: 'unchecked' });
    expect(elapsed).toBeLessThan(5000);
    expect(await probeSecretService({ env: {}, service, timeoutMs: 1000 })).toEqual({
      status: 'unavailable',
      reason: 'no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)',
    });
  });

  it("lists accounts under the same timeout (the library's own listing has none)", async () => {
    const bus = await fake('hello-only');
    const started = Date.now();
    const listed = await listSecretServiceAccounts({
      env: { DBUS_SESSION_BUS_ADDRESS: bus.address },
      service,
      timeoutMs: 400,
    });
    expect(listed).toEqual(timeout);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('KeyringClient: a failed probe fails every later call at once, with the same exit-2 error', async () => {
    const bus = await fake('silent');
    const client = new KeyringClient({
      service,
      timeoutMs: 300,
      env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: bus.address },
    });
    const first = await client.ready().catch((err: unknown) => err);
    expect(first).toBeInstanceOf(IdcliError);
    expect((first as IdcliError).exitCode).toBe(ExitCode.USAGE);
    expect((first as IdcliError).message).toBe('keychain did not answer within 0.3 s');
    const started = Date.now();
    await expect(client.get('someone')).rejects.toBe(first);
    await expect(client.list()).rejects.toBe(first);
    expect(Date.now() - started).toBeLessThan(200);
    expect(bus.connections).toBe(1);
  });

  it("KeyringClient: refuses a healthy bus that is not the one the library would use (this process's own)", async () => {
    const bus = await fake('stalls-after-open-session');
    const client = new KeyringClient({
      service,
      timeoutMs: 5000,
      env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: bus.address },
    });
    await expect(client.ready()).rejects.toThrow(/not this process's own/);
    expect(bus.calls.filter((c) => c.endsWith('OpenSession'))).toEqual([]); // the library never connected there
  });
});

describe.runIf(HAVE_KEYRING)('probeSecretService against the real session bus (gnome-keyring)', () => {
  it('finds it ready, quickly', async () => {
    // Generous bounds for a loaded machine; on an idle one this takes a few milliseconds.
    const started = Date.now();
    expect(
      await probeSecretService({ env: process.env, service: `idcli-probe-${process.pid}`, timeoutMs: 20_000 }),
    ).toEqual({ status: 'ready', writable: true });
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

/**
 * The bounded check of the Secret Service that runs before @napi-rs/keyring may connect in process. Fake buses
 * (real Unix sockets speaking D-Bus, see fixtures/fake-bus.ts) stand for the ways a session goes wrong; the real
 * session bus of scripts/with-keyring.sh for a healthy one.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, IdcliError } from '../../src/errors.js';
import { KeyringClient } from '../../src/store/keyring-client.js';
import { checkSecretService, LOCKED, sessionBusSocket } from '../../src/store/secret-service-check.js';
import { startPrivateKeyring } from '../support/private-keyring.js';
import { type FakeBus, type FakeBusMode, startFakeBus } from '../support/fixtures/fake-bus.js';
import { tempDir } from '../support/cli.js';
import { FakeClock } from '../support/clock.js';
import { until } from '../support/until.js';

const HAVE_KEYRING = process.env.IDCLI_TEST_KEYRING === '1';
const GUID = 'guid=0123456789abcdef0123456789abcdef';
const HELLO = 'org.freedesktop.DBus org.freedesktop.DBus.Hello';
const GET = 'org.freedesktop.secrets org.freedesktop.DBus.Properties.Get';

describe('sessionBusSocket (where libdbus would connect)', () => {
  it('reads unix:path and unix:abstract addresses, ignoring the other keys', () => {
    expect(sessionBusSocket({ DBUS_SESSION_BUS_ADDRESS: `unix:path=/run/user/1000/bus,${GUID}` })).toBe(
      '/run/user/1000/bus',
    );
    expect(sessionBusSocket({ DBUS_SESSION_BUS_ADDRESS: `unix:abstract=/tmp/dbus-AbC123,${GUID}` })).toBe(
      '\0/tmp/dbus-AbC123',
    );
  });

  it('undoes %-escaping in values', () => {
    expect(sessionBusSocket({ DBUS_SESSION_BUS_ADDRESS: 'unix:path=/tmp/with%20space%2cand%3bmore' })).toBe(
      '/tmp/with space,and;more',
    );
  });

  it('takes the first address, and marks transports it does not speak', () => {
    expect(sessionBusSocket({ DBUS_SESSION_BUS_ADDRESS: 'unix:path=/a;unix:abstract=b' })).toBe('/a');
    expect(sessionBusSocket({ DBUS_SESSION_BUS_ADDRESS: 'tcp:host=localhost,port=4;unix:path=/a' })).toBeNull();
    expect(sessionBusSocket({ DBUS_SESSION_BUS_ADDRESS: 'unix:runtime=yes' })).toBeNull();
    expect(sessionBusSocket({ DBUS_SESSION_BUS_ADDRESS: 'launchd:env=DBUS_LAUNCHD_SESSION_BUS_SOCKET' })).toBeNull();
  });

  it('falls back to $XDG_RUNTIME_DIR/bus without an address, and to nothing without either', () => {
    expect(sessionBusSocket({ XDG_RUNTIME_DIR: '/run/user/7' })).toBe('/run/user/7/bus');
    expect(sessionBusSocket({ DBUS_SESSION_BUS_ADDRESS: '', XDG_RUNTIME_DIR: '/run/user/7' })).toBe('/run/user/7/bus');
    expect(sessionBusSocket({})).toBeUndefined();
  });
});

describe.runIf(process.platform === 'linux')('checkSecretService against fake buses', () => {
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

  /**
   * The check on a clock of its own, moved by `timeoutMs` only once the bus has seen `asked` (for a check that must
   * give up) and not at all otherwise; `elapsed` is the clock's time the check took, `early` whether it had ended
   * before the clock moved.
   */
  async function timed(address: string, timeoutMs: number, asked?: () => boolean) {
    const clock = new FakeClock();
    const started = clock.now();
    let done = false;
    const check = checkSecretService({ env: { DBUS_SESSION_BUS_ADDRESS: address }, timeoutMs, clock }).finally(
      () => (done = true),
    );
    let early = false;
    if (asked) {
      await until(() => (asked() || done ? true : undefined), 10_000, 'the check to ask');
      early = done;
      await clock.elapse(timeoutMs, "the check's timeout");
    }
    const result = await check;
    return { result, elapsed: clock.now() - started, early };
  }

  /** The bus's open connections once the check's hang-up has reached it, or at a deadline if it never does. */
  async function openAfterHangUp(bus: FakeBus): Promise<number> {
    for (const end = Date.now() + 5000; bus.open > 0 && Date.now() < end;) await sleep(10);
    return bus.open;
  }

  const timeout = { status: 'unavailable', reason: 'keychain did not answer within 0.4 s' };

  it('gives up on a socket that accepts the connection and never answers, after the timeout', async () => {
    const bus = await fake('silent');
    const { result, elapsed, early } = await timed(bus.address, 400, () => bus.connections > 0);
    expect(result).toEqual(timeout);
    expect({ early, elapsed }).toEqual({ early: false, elapsed: 400 });
    expect(bus.connections).toBe(1);
    expect(await openAfterHangUp(bus)).toBe(0); // the check hung up
  });

  it('gives up on a bus that authenticates and then ignores Hello', async () => {
    const bus = await fake('auth-only');
    const { result, elapsed, early } = await timed(bus.address, 400, () => bus.calls.includes(HELLO));
    expect(result).toEqual(timeout);
    expect({ early, elapsed }).toEqual({ early: false, elapsed: 400 });
    expect(bus.calls[0]).toBe(HELLO);
  });

  it('gives up on a bus whose Secret Service never answers, though Hello was answered', async () => {
    const bus = await fake('hello-only');
    const { result, elapsed, early } = await timed(bus.address, 400, () => bus.calls.includes(GET));
    expect(result).toEqual(timeout);
    expect({ early, elapsed }).toEqual({ early: false, elapsed: 400 });
    expect(bus.calls).toContain(GET); // asked, never answered
  });

  it('says at once that nobody owns the Secret Service name', async () => {
    const bus = await fake('no-secret-service');
    const { result, elapsed } = await timed(bus.address, 10_000);
    expect(result).toEqual({
      status: 'unavailable',
      reason: 'no Secret Service on the D-Bus session bus (org.freedesktop.DBus.Error.ServiceUnknown)',
    });
    expect(elapsed).toBe(0); // answered with the timeout's clock never moved
  });

  it('refuses a locked keyring, which would make the library wait for an unlock prompt', async () => {
    const bus = await fake('locked');
    expect((await timed(bus.address, 10_000)).result).toEqual({ status: 'unavailable', reason: LOCKED });
    expect(bus.calls.some((c) => c.endsWith('.Unlock') || c.endsWith('.OpenSession'))).toBe(false);
  });

  it('refuses a keyring without a default collection, where the first write would prompt to create one', async () => {
    // gnome-keyring may deny the alias to a caller it has not yet recorded: the check asks again after pauses on its
    // clock, and believes the fourth denial.
    const bus = await fake('no-default-collection');
    const clock = new FakeClock();
    const started = clock.now();
    const check = checkSecretService({ env: { DBUS_SESSION_BUS_ADDRESS: bus.address }, timeoutMs: 10_000, clock });
    const pause = (ms: number) => ms < 10_000;
    const pauses = [];
    for (let i = 0; i < 3; i++) pauses.push(await clock.elapseFirst(pause, 'a pause between asks'));
    expect(await check).toEqual({ status: 'unavailable', reason: 'the keyring has no default collection' });
    expect(pauses).toEqual([20, 80, 320]);
    expect(clock.now() - started).toBe(420);
    expect(clock.pending()).toEqual([]);
    expect(bus.calls).toEqual([HELLO, GET, GET, GET, GET, GET]);
  });

  it('finds a healthy, unlocked Secret Service ready, asking only what it needs, and hangs up', async () => {
    const bus = await fake('stalls-after-open-session');
    const { result, elapsed } = await timed(bus.address, 10_000);
    expect(result).toEqual({ status: 'ready' });
    expect(elapsed).toBe(0); // answered with the timeout's clock never moved
    // No search by the library's item attributes, no secret session, no secret.
    expect(bus.calls).toEqual([HELLO, GET, GET]);
    expect(await openAfterHangUp(bus)).toBe(0);
  });

  it('asks the Secret Service first what needs no record of the caller, and waits for the answer', async () => {
    // gnome-keyring on a busy machine: see records-callers-late in fixtures/fake-bus.ts. A call that needs the
    // record, sent with the first, would be refused.
    const bus = await fake('records-callers-late');
    expect((await timed(bus.address, 10_000)).result).toEqual({ status: 'ready' });
    expect(bus.connections).toBe(1);
  });

  it('reaches a bus on an abstract socket', async () => {
    const bus = await fake('stalls-after-open-session', { abstract: true });
    expect(bus.address).toMatch(/^unix:abstract=/);
    expect((await timed(bus.address, 10_000)).result).toEqual({ status: 'ready' });
  });

  it('names the socket it could not reach', async () => {
    const absent = join(dir.path, 'absent.sock');
    expect((await timed(`unix:path=${absent}`, 10_000)).result).toEqual({
      status: 'unavailable',
      reason: `cannot connect to the D-Bus session bus at ${absent} (ENOENT)`,
    });
  });

  it('leaves transports and authentication it does not speak to the library, and reports a missing bus', async () => {
    expect((await timed('tcp:host=127.0.0.1,port=1', 10_000)).result).toEqual({ status: 'unchecked' });
    const { result, elapsed } = await timed((await fake('rejects-external')).address, 10_000);
    expect(result).toEqual({ status: 'unchecked' });
    expect(elapsed).toBe(0); // answered with the timeout's clock never moved
    expect(await checkSecretService({ env: {}, timeoutMs: 1000 })).toEqual({
      status: 'unavailable',
      reason: 'no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)',
    });
  });

  it('KeyringClient: a failed check fails every later call at once, with the same exit-2 error', async () => {
    const bus = await fake('silent');
    const clock = new FakeClock();
    const client = new KeyringClient({
      service: 'idcli-probe-test',
      timeoutMs: 2000,
      env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: bus.address },
      clock,
    });
    const ready = client.ready().catch((err: unknown) => err);
    await until(() => (bus.connections > 0 ? true : undefined), 10_000, 'the check to connect');
    await clock.elapse(2000, "the check's timeout");
    const first = await ready;
    expect(first).toBeInstanceOf(IdcliError);
    expect((first as IdcliError).exitCode).toBe(ExitCode.USAGE);
    expect((first as IdcliError).code).toBe('KEYCHAIN_UNAVAILABLE');
    expect((first as IdcliError).message).toBe('keychain did not answer within 2 s');
    // Later calls fail with the clock never moved again: one that waited for another timeout would never settle.
    const started = clock.now();
    let settled = false;
    const later = Promise.allSettled([client.get('someone'), client.set('someone', Buffer.from('x')), client.list()]);
    void later.finally(() => (settled = true));
    await until(() => (settled ? true : undefined), 10_000, 'the later calls to fail without waiting');
    expect(await later).toEqual([0, 1, 2].map(() => ({ status: 'rejected', reason: first })));
    expect(clock.now()).toBe(started);
    expect(clock.pending()).toEqual([]);
    expect(bus.connections).toBe(1);
  });

  it('KeyringClient: a locked keyring is unavailable before the library is asked anything', async () => {
    const bus = await fake('locked');
    const client = new KeyringClient({
      service: 'idcli-probe-test',
      timeoutMs: 5000,
      env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: bus.address },
    });
    await expect(client.get('someone')).rejects.toThrow(LOCKED);
    expect(bus.calls).toEqual([HELLO, GET, GET]);
    expect(bus.connections).toBe(1);
  });

  it("KeyringClient: refuses a healthy bus that is not the one the library would use (this process's own)", async () => {
    const bus = await fake('stalls-after-open-session');
    const client = new KeyringClient({
      service: 'idcli-probe-test',
      timeoutMs: 5000,
      env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: bus.address },
    });
    await expect(client.ready()).rejects.toThrow(/not this process's own/);
    expect(bus.calls.filter((c) => c.endsWith('OpenSession'))).toEqual([]); // the library never connected there
  });
});

describe.runIf(HAVE_KEYRING)('checkSecretService against the real session bus (gnome-keyring)', () => {
  it('finds it ready, quickly', async () => {
    // On an idle machine this takes a few milliseconds. The check's own timeout is on a clock that never moves, so a
    // check that waits for something other than the keyring's answers (a timer, a prompt) never settles, and the
    // deadline on its answer says so; a slow answer on a loaded machine still comes well within that deadline.
    const clock = new FakeClock();
    let result: Awaited<ReturnType<typeof checkSecretService>> | undefined;
    void checkSecretService({ env: process.env, timeoutMs: 20_000, clock }).then((r) => (result = r));
    expect(await until(() => result, 10_000, "the keyring's answer")).toEqual({ status: 'ready' });
    expect(clock.pending()).toEqual([]); // the check's timer is gone with it
  });
});

describe.runIf(HAVE_KEYRING)('checkSecretService and gnome-keyring, many callers at once', () => {
  // gnome-keyring records each new caller in an idle callback; a call that needs the record and comes first
  // (the collection's Locked property, right behind the first call) aborts the daemon or is never answered. Many
  // new callers at once widen that window. The check stays out of it: its first call needs no record, and it
  // waits for the answer before asking anything else. Until the record exists the daemon may also answer that the
  // default alias does not exist: a few in every few thousand checks at this load, which the check asks again.
  const CHECKS = 8000;
  const AT_ONCE = 128;

  it('never brings the daemon down, is always answered, and never finds the default collection missing', async () => {
    const dir = await tempDir();
    const keyring = await startPrivateKeyring(dir.path);
    try {
      const env = { ...process.env, ...keyring.env };
      const results: Record<string, number> = {};
      let started = 0;
      const caller = async () => {
        while (started < CHECKS && keyring.daemonExit() === null) {
          started++;
          const result = await checkSecretService({ env, timeoutMs: 30_000 });
          const key = result.status === 'unavailable' ? result.reason : result.status;
          results[key] = (results[key] ?? 0) + 1;
        }
      };
      await Promise.all(Array.from({ length: AT_ONCE }, caller));
      expect(keyring.daemonExit()).toBeNull();
      // No timeout, no failed call, no wrong "no default collection".
      expect(results).toEqual({ ready: CHECKS });
    } finally {
      await keyring.close();
      await dir.cleanup();
    }
  });
});

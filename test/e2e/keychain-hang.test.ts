/**
 * Needs a process: a keychain call hung on a real D-Bus peer cannot be abandoned in process, so only a child's exit
 * shows that a hung keychain costs a bounded time and then a clear exit 2 (or, in auto mode, the file store). The
 * library's stuck call blocks the main thread (while connecting) or the process's exit (a thread-pool call; Node
 * joins the pool before exiting). So these run the store in a separate process against a fake bus, the way
 * `idcli token` would, and time the process until it is really gone.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeBus, type FakeBusMode, startFakeBus } from '../support/fixtures/fake-bus.js';
import { runFixture, waitForExit } from '../support/store.js';
import { tempDir } from '../support/cli.js';

const TIMEOUT_MS = 500;
/**
 * Room for a loaded machine past the timeout, still far below libdbus's 25 s and the unlock prompt that never
 * ends: a bound on what idcli waits for, not on how fast the machine is.
 */
const SLACK_MS = 10_000;

describe.runIf(process.platform === 'linux')('a hung keychain, as `idcli token` meets it (separate process)', () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let bus: FakeBus | null;

  beforeEach(async () => {
    dir = await tempDir();
    bus = null;
  });
  afterEach(async () => {
    await bus?.close();
    await dir.cleanup();
  });

  async function read(mode: FakeBusMode, storeMode: 'keychain' | 'auto') {
    bus = await startFakeBus(dir.path, mode);
    const env = { ...process.env, DBUS_SESSION_BUS_ADDRESS: bus.address };
    const started = Date.now();
    const child = runFixture(
      'keychain-read',
      [storeMode, join(dir.path, 'config'), 'idcli-hang-test', String(TIMEOUT_MS)],
      env,
    );
    const exit = await waitForExit(child);
    const elapsed = Date.now() - started;
    // How long the store took by the fixture's own clock (without the process start-up).
    const reportedAfter = Number(/after (\d+) ms/.exec(exit.stderr)?.[1] ?? NaN);
    return { ...exit, elapsed, reportedAfter };
  }

  it('a bus that never answers: the library is never reached; exit 2 right after the timeout', async () => {
    const r = await read('silent', 'keychain');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('error after');
    expect(r.stderr).toContain(
      'keychain unavailable: keychain did not answer within 0.5 s; set IDCLI_CREDENTIAL_STORE=file',
    );
    expect(r.reportedAfter).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(r.reportedAfter).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    expect(r.elapsed).toBeLessThan(20_000);
    expect(bus!.connections).toBe(1); // the probe's; the library would have blocked the main thread for good
  });

  it("a bus that authenticates and ignores Hello: the same, not libdbus's 25 s", async () => {
    const r = await read('auth-only', 'keychain');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('did not answer within 0.5 s');
    expect(r.reportedAfter).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    expect(r.elapsed).toBeLessThan(20_000);
    expect(bus!.connections).toBe(1);
  });

  it('a locked keyring: exit 2 at once, saying so, without the prompt the library would wait on', async () => {
    const r = await read('locked', 'keychain');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('keychain unavailable: the keyring is locked');
    expect(r.reportedAfter).toBeLessThan(SLACK_MS);
    expect(bus!.connections).toBe(1);
    expect(bus!.calls.some((c) => c.endsWith('.Unlock') || c.endsWith('.OpenSession'))).toBe(false);
  });

  it('auto mode falls back to the file store and reads from it without a warning, the notice kept for writes', async () => {
    const r = await read('silent', 'auto');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/^warning: /m);
    expect(r.stderr).toMatch(
      /^notice: OS keychain unavailable \(keychain did not answer within 0\.5 s\); storing credentials in .+ instead/m,
    );
    expect(r.stderr).toMatch(/read from file after \d+ ms: nothing/);
  });

  it("a Secret Service that stalls after the check: exit 2 within the library's own call timeout", async () => {
    const r = await read('stalls-after-probe', 'keychain');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('error after');
    expect(r.stderr).toContain('the Secret Service did not answer in time');
    // The check passed; the library's connection, made on the main thread, gives up after its own call timeout
    // (see keyring-client.ts), which no timer of idcli's can cut short. Bounded, not hung.
    expect(r.reportedAfter).toBeLessThan(TIMEOUT_MS + 5000);
    expect(r.elapsed).toBeLessThan(20_000);
    expect(bus!.connections).toBe(2); // the check, then the library
  });
});

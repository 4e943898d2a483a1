/**
 * The keychain client's own timeout on a library call, after a check that found the Secret Service healthy. The bus
 * answers the check and the library's connection, then never the secret call: only idcli's timeout, on the client's
 * clock, ends the wait. A file of its own because it points this process's session bus (the only one the library
 * reads) at the fake bus; the bus runs in a child because the library connects on this thread, synchronously.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, IdcliError } from '../../src/errors.js';
import { KeyringClient } from '../../src/store/keyring-client.js';
import { FakeClock } from '../support/clock.js';
import { tempDir } from '../support/cli.js';
import { FIXTURES, ROOT } from '../support/store.js';
import { until } from '../support/until.js';

const TIMEOUT_MS = 3000;
const SEARCH = 'org.freedesktop.secrets org.freedesktop.Secret.Service.SearchItems';

describe.runIf(process.platform === 'linux')('KeyringClient: a library call that stalls after the check', () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let peer: ChildProcess;
  let calls: string[];
  let busBefore: string | undefined;

  beforeEach(async () => {
    dir = await tempDir();
    calls = [];
    let out = '';
    peer = spawn(
      process.execPath,
      ['--import', 'tsx', join(FIXTURES, 'fake-bus-serve.ts'), dir.path, 'stalls-after-open-session'],
      { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
    );
    peer.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const lines = out.split('\n');
      out = lines.pop()!;
      calls.push(...lines);
    });
    const address = await until(() => calls[0], 20_000, "the fake bus's address");
    calls.shift();
    busBefore = process.env.DBUS_SESSION_BUS_ADDRESS;
    process.env.DBUS_SESSION_BUS_ADDRESS = address;
  });

  afterEach(async () => {
    process.env.DBUS_SESSION_BUS_ADDRESS = busBefore;
    // Closing the bus also ends the library's stalled call, which would otherwise hold this process's exit.
    const gone = new Promise((resolve) => peer.once('exit', resolve));
    peer.stdin!.end();
    await gone;
    await dir.cleanup();
  });

  it('gives up at exactly its timeout, on its own clock, saying the keychain did not answer', async () => {
    const clock = new FakeClock();
    const client = new KeyringClient({ service: 'idcli-timeout-test', timeoutMs: TIMEOUT_MS, clock });
    let settled: { err: unknown } | undefined;
    client.get('someone').then(
      () => (settled = { err: null }),
      (err: unknown) => (settled = { err }),
    );
    // The check passed and the library asked the Secret Service for the item: the call is in flight, and its
    // timer, set as the call began, is the only one left on the client's clock.
    await until(() => calls.includes(SEARCH) || undefined, 20_000, "the library's secret call");
    expect(clock.pending()).toEqual([TIMEOUT_MS]);

    clock.advance(TIMEOUT_MS - 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBeUndefined();

    clock.advance(1);
    const { err } = await until(() => settled, 20_000, 'the call to be given up');
    expect(err).toBeInstanceOf(IdcliError);
    const e = err as IdcliError;
    expect(e.code).toBe('KEYCHAIN_UNAVAILABLE');
    expect(e.exitCode).toBe(ExitCode.USAGE);
    expect(e.message).toBe('keychain did not answer within 3 s');
    expect(e.hint).toBe('set IDCLI_CREDENTIAL_STORE=file to use the file store');
    // A keychain that timed out is not asked again in this run.
    await expect(client.get('someone else')).rejects.toBe(err);
  });
});

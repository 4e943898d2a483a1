// Needs a process: the keychain library keeps the first session bus its process connects to, for the process's life.
/**
 * The keychain client's own timeout on a library call, after a check that found the Secret Service healthy. The bus
 * answers the check and the library's connection, then never the secret call: only idcli's timeout, on the client's
 * clock, ends the wait. The client and its FakeClock run in a child (fixtures/keyring-client-get.ts) whose session bus
 * is the fake one, driven line by line over its stdin; the bus runs here, since the library in the child connects on
 * its main thread, synchronously.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { tempDir } from '../support/cli.js';
import { type FakeBus, startFakeBus } from '../support/fixtures/fake-bus.js';
import { type LineChild, lineChild } from '../support/line-child.js';
import { FIXTURES, ROOT } from '../support/store.js';
import { until } from '../support/until.js';

const TIMEOUT_MS = 3000;
const SEARCH = 'org.freedesktop.secrets org.freedesktop.Secret.Service.SearchItems';

describe.runIf(process.platform === 'linux')('KeyringClient: a library call that stalls after the check', () => {
  // Each is set by beforeEach as it goes: one that failed half-way leaves afterEach only what it made to undo.
  let dir: { path: string; cleanup: () => Promise<void> } | undefined;
  let bus: FakeBus | undefined;
  let client: ChildProcess | undefined;
  let driven: LineChild;

  beforeEach(async () => {
    dir = await tempDir();
    bus = await startFakeBus(dir.path, 'stalls-after-open-session');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(FIXTURES, 'keyring-client-get.ts'), 'idcli-timeout-test', String(TIMEOUT_MS)],
      { cwd: ROOT, env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: bus.address }, stdio: ['pipe', 'pipe', 'inherit'] },
    );
    client = child;
    driven = lineChild(child);
  });

  afterEach(async () => {
    const [made, started, child] = [dir, bus, client];
    [dir, bus, client] = [undefined, undefined, undefined];
    // Closing the bus also ends the library's stalled call, which would otherwise hold the child's exit.
    child?.stdin!.end();
    await started?.close();
    if (child) {
      await until(() => child.exitCode ?? child.signalCode ?? undefined, 20_000, 'the client process to exit').catch(
        (err: unknown) => {
          child.kill('SIGKILL');
          throw err;
        },
      );
    }
    await made?.cleanup();
  });

  const ask = (command: string) => driven.ask(command);

  it('gives up at exactly its timeout, on its own clock, saying the keychain did not answer', async () => {
    // The check passed and the library asked the Secret Service for the item: the call is in flight, and its
    // timer, set as the call began, is the only one left on the client's clock.
    await until(() => bus?.calls.includes(SEARCH) || undefined, 20_000, "the library's secret call");
    expect(await ask('pending')).toEqual({ pending: [TIMEOUT_MS] });

    expect(await ask(`advance ${TIMEOUT_MS - 1}`)).toEqual({ settled: false });

    await ask('advance 1');
    const given = await until(
      async () => {
        const state = (await ask('state')) as { settled: boolean };
        return state.settled ? state : undefined;
      },
      20_000,
      'the call to be given up',
    );
    expect(given).toEqual({
      settled: true,
      error: {
        idcliError: true,
        code: 'KEYCHAIN_UNAVAILABLE',
        exitCode: ExitCode.USAGE,
        message: 'keychain did not answer within 3 s',
        hint: 'set IDCLI_CREDENTIAL_STORE=file to use the file store',
      },
    });
    // A keychain that timed out is not asked again in this run.
    expect(await ask('again')).toEqual({ sameError: true });
  });
});

// Needs a process: the keychain library keeps the first session bus its process connects to, for the process's life.
/**
 * A Secret Service started again under a run, as systemd or D-Bus does after gnome-keyring crashes: the keychain
 * client's entries still hold the dead daemon's sessions. The next call, and a call in flight when the daemon died,
 * are made once more on a new entry, and find the records. The client runs in a child
 * (fixtures/keyring-client-lines.ts) under a scripts/with-keyring.sh of its own, whose D-Bus starts the daemon again.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KEYCHAIN_TESTABLE } from '../support/harness.js';
import { lineChild } from '../support/line-child.js';
import { FIXTURES, ROOT } from '../support/store.js';
import { until } from '../support/until.js';

function client(onTestFinished: (fn: () => Promise<void>) => void, timeoutMs = 10_000) {
  const child = spawn(
    'bash',
    [
      join(ROOT, 'scripts', 'with-keyring.sh'),
      process.execPath,
      '--import',
      'tsx',
      join(FIXTURES, 'keyring-client-lines.ts'),
    ],
    {
      cwd: ROOT,
      env: { ...process.env, IDCLI_TEST_KEYRING_DIR: undefined, KEYRING_CLIENT_TIMEOUT_MS: String(timeoutMs) },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const ended = async () => {
    child.stdin!.end();
    const code = await until(() => child.exitCode ?? undefined, 20_000, 'the keyring run to end');
    return { code, deaths: stderr.split('\n').filter((l) => l.includes('died during')) };
  };
  // A test that failed half-way leaves its run to be ended here: the session, its bus and its daemon with it.
  onTestFinished(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin!.end();
    await until(() => child.exitCode ?? child.signalCode ?? undefined, 20_000, 'the keyring run to end');
  });
  return { ask: lineChild(child).ask, ended };
}

describe.runIf(KEYCHAIN_TESTABLE).concurrent('the keychain client, when the Secret Service is started again', () => {
  it('makes the next call on a new session, which finds what the dead daemon stored', async ({ onTestFinished }) => {
    const c = client(onTestFinished);
    expect(await c.ask('set someone v1')).toEqual({ value: null });
    expect(await c.ask('kill')).toEqual({ killed: true });
    expect(await c.ask('get someone')).toEqual({ value: 'v1' });
    expect(await c.ask('kill')).toEqual({ killed: true });
    expect(await c.ask('set someone v2')).toEqual({ value: null });
    expect(await c.ask('kill')).toEqual({ killed: true });
    expect(await c.ask('list')).toEqual({ value: ['someone'] });
    expect(await c.ask('kill')).toEqual({ killed: true });
    expect(await c.ask('delete someone')).toEqual({ value: true });
    expect(await c.ask('get someone')).toEqual({ value: null });
    const { code, deaths } = await c.ended();
    expect(deaths).toHaveLength(4); // each named by with-keyring, whose run fails for them
    expect(code).toBe(1);
  });

  it('makes a call in flight when the daemon died once more, and it finds the record', async ({ onTestFinished }) => {
    const c = client(onTestFinished);
    expect(await c.ask('set someone v1')).toEqual({ value: null });
    expect(await c.ask('stop')).toEqual({ stopped: true });
    expect(await c.ask('start-get someone')).toEqual({ started: true, inDaemonsQueue: true });
    expect(await c.ask('kill-stopped')).toEqual({ killed: true });
    expect(await c.ask('result')).toEqual({ value: 'v1' });
    const { code, deaths } = await c.ended();
    expect(deaths).toHaveLength(1);
    expect(code).toBe(1);
  });

  it('gives up for the run when the daemon started again does not answer, at once on later calls', async ({
    onTestFinished,
  }) => {
    const c = client(onTestFinished, 2000);
    expect(await c.ask('set someone v1')).toEqual({ value: null });
    expect(await c.ask('stop')).toEqual({ stopped: true });
    expect(await c.ask('start-get someone')).toEqual({ started: true, inDaemonsQueue: true });
    expect(await c.ask('hang-next')).toEqual({ hanging: true });
    expect(await c.ask('kill-stopped')).toEqual({ killed: true });
    const timedOut = { error: 'keychain did not answer within 2 s' };
    expect(await c.ask('result')).toEqual(timedOut);
    // A new entry would wait on the silent daemon without limit, far past the timeout.
    const asked = Date.now();
    expect(await c.ask('get someone')).toEqual(timedOut);
    expect(await c.ask('set other v1')).toEqual(timedOut);
    expect(Date.now() - asked).toBeLessThan(2000);
    const { code } = await c.ended();
    expect(code).toBe(1);
  });
});

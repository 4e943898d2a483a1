/**
 * A stop signal while a refresh is in flight. The server spends the old refresh token as it answers, so abandoning
 * the answer would lose the sign-in: the first signal says, in one line, that idcli finishes the refresh and that a
 * second signal loses the sign-in; the refresh is then finished and saved, and the run ends with the signal's code.
 * A second signal still waits for an answer due within a few seconds; one that is not due by then is given up,
 * saying so; a third leaves at once. Against the emulator delaying its answer, with signals sent in process
 * (StopSignals) and a FakeClock for the grace, or real signals to the built CLI.
 *
 * The tests are in test/commands/token/signals.test.ts (one signal) and signals-grace.test.ts (more), in process, and
 * test/e2e/refresh-signals.test.ts (real signals to a real process); each test has its own harness and they run at
 * the same time.
 */
import type { ChildProcess } from 'node:child_process';
import { expect, type TestContext } from 'vitest';
import type { StopSignal } from '../../src/cli.js';
import type { CliResult } from './cli.js';
import type { FakeClock } from './clock.js';
import { StopSignals } from './run-command.js';
import { until } from './until.js';
import { type Harness, harness, KEYCHAIN_TESTABLE, type StoreKind, refreshGrants, storeLogin } from './harness.js';

const tokenRequests = (h: Harness) => h.emu.requests.filter((r) => r.path === '/oauth/token').length;

export const FIRST = (key: string) =>
  `idcli: finishing the token refresh before stopping; a second ${key} waits 5 s more at most, then stops and loses the sign-in\n`;
export const SECOND = (key: string) =>
  `idcli: waiting 5 s at most for the token refresh to finish; a third ${key} stops now\n`;
export const GIVEN_UP =
  'error: stopped before the token refresh finished, which may have lost the sign-in; if the next `idcli token` says so, run `idcli login`\n';

/**
 * Signed in, with an expired access token: the next `token` refreshes. The token answer comes `delayMs` late. The
 * harness is the calling test's own, closed once it has finished, so tests may run at the same time.
 */
export async function refreshing(store: StoreKind, delayMs: number, { onTestFinished }: TestContext): Promise<Harness> {
  const h = await harness({ store, recordItems: 0 });
  onTestFinished(() => h.close());
  // The sign-in is set-up, not what is tested: stored as login leaves it, without the browser flow.
  await storeLogin(h, { ttlSec: -1 });
  h.emu.inject({ path: '/oauth/token', fault: { kind: 'latency', ms: delayMs } });
  return h;
}

/** The store of the process tests: the keychain where there is one, whose connection must not hold the exit up. */
export const PROCESS_STORE: StoreKind = KEYCHAIN_TESTABLE ? 'keychain' : 'file';

const saidLines = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('idcli: ')).length;

/**
 * Runs `idcli token` in process on `clock` and sends `signal` once the refresh request has reached the server; each
 * further signal (up to `times`) once the CLI has said its line about the previous one. Resolves, once they are sent,
 * with the run still going.
 */
export async function tokenSignalled(
  h: Harness,
  signal: StopSignal,
  times: number,
  clock?: FakeClock,
): Promise<{ run: Promise<CliResult> }> {
  const before = tokenRequests(h);
  const signals = new StopSignals();
  let stderr = '';
  const run = h.command(['token'], {}, { signals, onStderr: (text) => (stderr += text), ...(clock && { clock }) });
  await until(() => (tokenRequests(h) > before ? true : undefined), 20_000, 'the refresh request');
  for (let sent = 1; ; sent++) {
    signals.send(signal);
    if (sent === times) return { run };
    await until(() => (saidLines(stderr) === sent ? true : undefined), 20_000, `the line about signal ${sent}`);
  }
}

/**
 * Runs `idcli token` and sends `signal` once the refresh request has reached the server; each further signal
 * (up to `times`) once the CLI has said its line about the previous one.
 */
export function tokenStoppedBy(h: Harness, signal: NodeJS.Signals, times: number): Promise<CliResult> {
  const before = tokenRequests(h);
  return h.run(
    ['token'],
    {},
    {
      onSpawn: (child: ChildProcess) => {
        let sent = 0;
        let stderr = '';
        const send = () => {
          sent += 1;
          child.kill(signal);
        };
        const timer = setInterval(() => {
          if (tokenRequests(h) > before) {
            clearInterval(timer);
            send();
          }
        }, 10);
        child.on('exit', () => clearInterval(timer));
        child.stderr!.on('data', (chunk: Buffer) => {
          stderr += chunk.toString('utf8');
          const lines = stderr.split('\n').filter((l) => l.startsWith('idcli: ')).length;
          if (sent > 0 && sent < times && lines === sent) send();
        });
      },
    },
  );
}

/** The refresh went through and was kept: a forced refresh with what is stored now is accepted, no reuse. */
export async function expectSignInKept(h: Harness, generationBefore: number): Promise<void> {
  const record = (await h.record())!;
  expect(record.generation).toBe(generationBefore + 1);
  const again = await h.command(['token', '--refresh']);
  expect(again.code, again.stderr).toBe(0);
  expect(refreshGrants(h)).toHaveLength(2);
  expect(refreshGrants(h).every((e) => e.ok && !e.reuse)).toBe(true);
}

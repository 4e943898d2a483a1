// Needs a process: what ends the run is a signal from outside, as `timeout` or Ctrl-C sends it.
/**
 * A stop signal ends a run whose requests fail at the proxy's CONNECT, at once and with 128 + the signal's number:
 * while the proxy leaves the CONNECT unanswered, and between the retries of a proxy that hangs up on it.
 */
import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { eachBrokenConnect } from '../support/broken-connect.js';
import { cliEnv } from '../support/list.js';
import { BIN, type CliResult, runCli, NO_STACK } from '../support/cli.js';
import { type ConnectFault } from '../support/proxy.js';

const ctx = eachBrokenConnect();

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('build the CLI first: npm run build');
});

type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/** Runs `args` through a proxy failing with `fault`, sends `signal` once the proxy has read `connects` CONNECTs. */
async function stoppedAt(
  fault: ConnectFault,
  args: string[],
  signal: StopSignal,
  connects: number,
): Promise<CliResult & { tookMs: number }> {
  const broken = await ctx.start(fault);
  let signalledAt = 0;
  const r = await runCli(args, {
    env: cliEnv(ctx.env, { HTTPS_PROXY: broken.url }),
    // Killed after this: a run that outlives its signal fails the test with a null code.
    timeoutMs: 20_000,
    onSpawn: (child: ChildProcess) => {
      const timer = setInterval(() => {
        if (broken.connects < connects) return;
        clearInterval(timer);
        signalledAt = Date.now();
        child.kill(signal);
      }, 10);
      child.on('exit', () => clearInterval(timer));
    },
  });
  return { ...r, tookMs: Date.now() - signalledAt };
}

const EXIT = (signal: StopSignal): number => 128 + constants.signals[signal];

describe('a stop signal while the proxy leaves the CONNECT unanswered', () => {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    it(`list: ${signal} ends the run at once with ${EXIT(signal)}`, async () => {
      const r = await stoppedAt(
        'silent',
        ['list', '/v1/users', '--limit', '2', '--api-base-url', ctx.target],
        signal,
        1,
      );
      expect(r.signal).toBeNull();
      expect(r.code, r.stderr).toBe(EXIT(signal));
      expect(r.stdout).toBe('');
      expect(r.stderr).not.toMatch(NO_STACK);
      // Generous: the failure this catches is a run held until the CONNECT times out, minutes later.
      expect(r.tookMs).toBeLessThan(10_000);
      expect(ctx.proxy!.connects).toBe(1);
    }, 30_000);
  }
});

describe('a stop signal between the retries of a proxy that hangs up on the CONNECT', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`api: ${signal} ends the run at once with ${EXIT(signal)}`, async () => {
      const args = ['api', `${ctx.target}/v1/users`, '--api-base-url', ctx.target, '--max-retries', '50'];
      const r = await stoppedAt('hang-up', args, signal, 2);
      expect(r.signal).toBeNull();
      expect(r.code, r.stderr).toBe(EXIT(signal));
      expect(r.stdout).toBe('');
      expect(r.tookMs).toBeLessThan(10_000);
      // Each retry waits its backoff first: the signal comes long before the retries are spent.
      expect(ctx.proxy!.connects).toBeLessThan(10);
    }, 30_000);
  }
});

/**
 * `idcli api` retries a GET as `list` retries a page: each command run in process against the emulator, a storm of
 * answers that ask for no wait (`Retry-After: 0`, or a date already past) is outlasted, as no retry comes sooner than
 * the backoff floor of its attempt. The run and the emulator share one FakeClock, so the storm and the waits are
 * counted, not waited.
 */
import { describe, it } from 'vitest';
import { type Emulator, startEmulator } from '../../emulator/index.js';
import { FakeClock } from '../../support/clock.js';
import { cliEnv, type ListEnv, listEnv } from '../../support/list.js';
import { runCommand } from '../../support/run-command.js';

const ITEM = '{\n  "id": 42,\n  "name": "Ada"\n}\n';
/** Every request gets the fault until this long after the first one did: less than the first four floors together. */
const STORM_MS = 1000;
/** The least wait before each retry (docs/cli.md, Retries and time limits): 100 ms, doubling. */
const FLOORS_MS = [100, 200, 400, 800, 1600];
/** A retry's wait is less than twice its floor; the HTTP time limits pending meanwhile are far longer. */
const isRetryWait = (ms: number): boolean => ms < 2 * FLOORS_MS.at(-1)!;

/** A fresh emulator serving ITEM, its storms run and its requests stamped on `clock`, and an environment for it. */
async function serve(clock: FakeClock): Promise<{ emu: Emulator; env: ListEnv & { cleanup: () => Promise<void> } }> {
  const emu = await startEmulator({ clock, now: () => clock.now() });
  const env = await listEnv(emu, emu.mintTokens().access_token);
  emu.setResource('/v1/users/42', ITEM);
  return { emu, env };
}

// Each case has an emulator and a clock of its own, so the cases run at the same time.
describe.concurrent('idcli api: a storm of answers asking for no wait', () => {
  it.for([
    { status: 429, retryAfter: '0' },
    { status: 503, retryAfter: 'Thu, 01 Jan 1970 00:00:00 GMT' },
  ])(
    'a GET answered $status with Retry-After: $retryAfter waits the floor before each retry',
    { timeout: 60_000 },
    async (fault, { expect, onTestFinished }) => {
      const clock = new FakeClock();
      const { emu, env } = await serve(clock);
      onTestFinished(async () => {
        await emu.close();
        await env.cleanup();
      });
      emu.inject({ path: '/v1/users/42', forMs: STORM_MS, fault: { kind: 'status', ...fault } });
      const r = await clock.runUntilSettled(
        runCommand(['api', 'users/42'], { env: cliEnv(env, { IDCLI_API_BASE_URL: `${emu.baseUrl}/v1` }), clock }),
        'the request',
        isRetryWait,
      );
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(ITEM);
      const seen = emu.requests.filter((q) => q.path === '/v1/users/42');
      // Refused until the storm ended, then answered: within --max-retries (5) although the server asked for no wait.
      expect(seen.length).toBeGreaterThanOrEqual(2);
      expect(seen.length).toBeLessThanOrEqual(6);
      expect(seen.map((q) => q.status)).toEqual([...seen.slice(1).map(() => fault.status), 200]);
      // After the nth refusal (0-based), the retry came at least its floor later, and sooner than twice it (the
      // jitter's ceiling): one request at a time, the shared clock moves only by the retries' waits.
      for (let n = 0; n + 1 < seen.length; n++) {
        const gap = seen[n + 1]!.time - seen[n]!.time;
        expect(gap).toBeGreaterThanOrEqual(FLOORS_MS[n]!);
        expect(gap).toBeLessThan(2 * FLOORS_MS[n]!);
      }
      // The last refusal came within the storm, the answer after it.
      expect(seen.at(-2)!.time - seen[0]!.time).toBeLessThan(STORM_MS);
      expect(seen.at(-1)!.time - seen[0]!.time).toBeGreaterThanOrEqual(STORM_MS);
      expect(emu.errors).toEqual([]);
    },
  );
});

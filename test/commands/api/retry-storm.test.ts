/**
 * `idcli api` retries a GET as `list` retries a page: each command run in process against the emulator, a storm of
 * answers that ask for no wait (`Retry-After: 0`, or a date already past) is outlasted, as no retry comes sooner than
 * the backoff floor of its attempt.
 */
import { describe, it } from 'vitest';
import { type Emulator, startEmulator } from '../../emulator/index.js';
import { cliEnv, type ListEnv, listEnv } from '../../support/list.js';
import { runCommand } from '../../support/run-command.js';

const ITEM = '{\n  "id": 42,\n  "name": "Ada"\n}\n';
/** Every request gets the fault until this long after the first one did: less than the first four floors together. */
const STORM_MS = 1000;
/** The least wait before each retry (docs/cli.md, Retries and time limits): 100 ms, doubling. */
const FLOORS_MS = [100, 200, 400, 800, 1600];

/** A fresh emulator serving ITEM, and an environment for it. */
async function serve(): Promise<{ emu: Emulator; env: ListEnv & { cleanup: () => Promise<void> } }> {
  const emu = await startEmulator();
  const env = await listEnv(emu, emu.mintTokens().access_token);
  emu.setResource('/v1/users/42', ITEM);
  return { emu, env };
}

// Each case waits out a storm of real time with an emulator of its own, so the cases run at the same time.
describe.concurrent('idcli api: a storm of answers asking for no wait', () => {
  it.for([
    { status: 429, retryAfter: '0' },
    { status: 503, retryAfter: 'Thu, 01 Jan 1970 00:00:00 GMT' },
  ])(
    'a GET answered $status with Retry-After: $retryAfter waits the floor before each retry',
    { timeout: 60_000 },
    async (fault, { expect, onTestFinished }) => {
      const { emu, env } = await serve();
      onTestFinished(async () => {
        await emu.close();
        await env.cleanup();
      });
      emu.inject({ path: '/v1/users/42', forMs: STORM_MS, fault: { kind: 'status', ...fault } });
      const r = await runCommand(['api', 'users/42'], {
        env: cliEnv(env, { IDCLI_API_BASE_URL: `${emu.baseUrl}/v1` }),
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(ITEM);
      const seen = emu.requests.filter((q) => q.path === '/v1/users/42');
      // Refused until the storm ended, then answered: within --max-retries (5) although the server asked for no wait.
      expect(seen.length).toBeGreaterThanOrEqual(2);
      expect(seen.length).toBeLessThanOrEqual(6);
      expect(seen.map((q) => q.status)).toEqual([...seen.slice(1).map(() => fault.status), 200]);
      // After the nth refusal (0-based), the retry came at least its floor later (less the clocks' rounding).
      for (let n = 0; n + 1 < seen.length; n++)
        expect(seen[n + 1]!.wallTime - seen[n]!.wallTime).toBeGreaterThanOrEqual(FLOORS_MS[n]! - 2);
      // The last refusal came within the storm, the answer after it.
      expect(seen.at(-1)!.wallTime - seen[0]!.wallTime).toBeGreaterThanOrEqual(STORM_MS - 2);
      expect(emu.errors).toEqual([]);
    },
  );
});

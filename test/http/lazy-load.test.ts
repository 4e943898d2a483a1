/**
 * node:http and node:https are loaded on the first request only: a cached `idcli token` makes none, so it must not
 * pay for them, while a refresh does load node:http. Checked on the BUILT CLI with the preloaded hook that records
 * which modules the process loaded.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../emulator/index.js';
import { cliEnv, eachTest, type ListEnv } from '../list/helpers.js';
import { BIN, ROOT, runCli } from '../support/cli.js';
import { storeExpiredSignIn, storeSignIn } from '../support/sign-in.js';

let emu: Emulator;
let env: ListEnv & { cleanup: () => Promise<void> };

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('build the CLI first: npm run build');
});

eachTest(
  [],
  (e, v) => {
    emu = e;
    env = v;
  },
  'stored',
);

/** Runs `idcli token` and returns which of node:http and node:https it loaded. */
async function tokenLoads(): Promise<string[]> {
  const out = join(env.configDir, 'loads.txt');
  const hook = join(ROOT, 'test', 'support', 'loaded-modules.cjs');
  const r = await runCli(['token'], {
    env: cliEnv(env, { NODE_OPTIONS: `--require=${hook}`, LOADED_MODULES_FILE: out }),
  });
  expect(r.code, r.stderr).toBe(0);
  return readFileSync(out, 'utf8')
    .split('\n')
    .filter((m) => m === 'node:http' || m === 'node:https');
}

describe('node:http stays off the cached-token path', () => {
  it('a cached token loads neither node:http nor node:https; a refresh loads node:http', async () => {
    await storeSignIn({ emu, configDir: env.configDir, ttlSec: 3600 });
    expect(await tokenLoads()).toEqual([]);
    expect(emu.tokenEvents).toHaveLength(0);

    await storeExpiredSignIn({ emu, configDir: env.configDir });
    expect(await tokenLoads()).toContain('node:http');
    expect(emu.tokenEvents.length).toBeGreaterThan(0);
  });
});

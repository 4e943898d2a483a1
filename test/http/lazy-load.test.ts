/**
 * node:http and node:https are loaded on the first request only: a cached `idcli token` makes none, so it must not
 * pay for them, while a refresh does load node:http. Checked on the BUILT CLI with a preloaded hook that records
 * which of the two the process loaded.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../emulator/index.js';
import { cliEnv, listEnv, type ListEnv } from '../list/helpers.js';
import { BIN, runCli } from '../support/cli.js';
import { storeSignIn } from '../support/sign-in.js';

let emu: Emulator;
let env: ListEnv & { cleanup: () => Promise<void> };

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('build the CLI first: npm run build');
});

beforeEach(async () => {
  emu = await startEmulator();
  env = await listEnv(emu, undefined);
});

afterEach(async () => {
  await emu.close();
  await env.cleanup();
});

/** Runs `idcli token` and returns which of node:http and node:https it loaded. */
async function tokenLoads(): Promise<string[]> {
  const hook = join(env.configDir, 'loads.cjs');
  const out = join(env.configDir, 'loads.json');
  writeFileSync(
    hook,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.moduleLoadList)));\n`,
  );
  const r = await runCli(['token'], { env: cliEnv(env, { NODE_OPTIONS: `--require=${hook}` }) });
  expect(r.code, r.stderr).toBe(0);
  const loaded = JSON.parse(readFileSync(out, 'utf8')) as string[];
  return loaded.filter((m) => m === 'NativeModule http' || m === 'NativeModule https');
}

describe('node:http stays off the cached-token path', () => {
  it('a cached token loads neither node:http nor node:https; a refresh loads node:http', async () => {
    await storeSignIn({ emu, configDir: env.configDir, ttlSec: 3600 });
    expect(await tokenLoads()).toEqual([]);
    expect(emu.tokenEvents).toHaveLength(0);

    await storeSignIn({ emu, configDir: env.configDir, ttlSec: -1 });
    expect(await tokenLoads()).toContain('NativeModule http');
    expect(emu.tokenEvents.length).toBeGreaterThan(0);
  });
});

// Needs a process: which modules load shows only in a process of the built CLI that starts with none.
/**
 * node:http and node:https are loaded on the first request only: a cached `idcli token` makes none, so it must not
 * pay for them, while a refresh does load node:http. Checked on the BUILT CLI with the preloaded hook that records
 * which modules the process loaded.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, eachTest } from '../support/list.js';
import { BIN, ROOT, runCli } from '../support/cli.js';
import { storeExpiredSignIn, storeSignIn } from '../support/sign-in.js';

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('build the CLI first: npm run build');
});

const ctx = eachTest([], 'stored');

/** Runs idcli (`token` unless told) and returns every file and Node builtin it loaded. */
async function loads(args: string[] = ['token'], extra: Record<string, string> = {}, code = 0): Promise<string[]> {
  const out = join(ctx.env.configDir, 'loads.txt');
  const hook = join(ROOT, 'test', 'support', 'loaded-modules.cjs');
  const r = await runCli(args, {
    env: cliEnv(ctx.env, { NODE_OPTIONS: `--require=${hook}`, LOADED_MODULES_FILE: out, ...extra }),
  });
  expect(r.code, r.stderr).toBe(code);
  return readFileSync(out, 'utf8').split('\n');
}

/** Which of node:http and node:https `idcli token` loaded. */
async function tokenLoads(): Promise<string[]> {
  return (await loads()).filter((m) => m === 'node:http' || m === 'node:https');
}

/** The etcd store's chunks (its client, lock, trust, doctor's checks) among the files loaded. */
const etcdFiles = (files: string[]) => files.filter((f) => /^etcd[-.]/.test(basename(f)));

describe('node:http stays off the cached-token path', () => {
  it('a cached token loads neither node:http nor node:https; a refresh loads node:http', async () => {
    await storeSignIn({ emu: ctx.emu, configDir: ctx.env.configDir, ttlSec: 3600 });
    expect(await tokenLoads()).toEqual([]);
    expect(ctx.emu.tokenEvents).toHaveLength(0);

    await storeExpiredSignIn({ emu: ctx.emu, configDir: ctx.env.configDir });
    expect(await tokenLoads()).toContain('node:http');
    expect(ctx.emu.tokenEvents.length).toBeGreaterThan(0);
  });
});

describe("the etcd store stays off the other stores' runs", () => {
  it('a cached token, a refresh, status and doctor with the file store load no etcd chunk', async () => {
    const built = readdirSync(join(ROOT, 'dist')).filter((f) => /^etcd[-.]/.test(f));
    expect(built.length).toBeGreaterThan(0); // the probe below would see them
    await storeSignIn({ emu: ctx.emu, configDir: ctx.env.configDir, ttlSec: 3600 });
    expect(etcdFiles(await loads())).toEqual([]);
    expect(etcdFiles(await loads(['status']))).toEqual([]);
    await storeExpiredSignIn({ emu: ctx.emu, configDir: ctx.env.configDir });
    const refresh = await loads();
    expect(refresh).toContain('node:http');
    expect(etcdFiles(refresh)).toEqual([]);
    expect(etcdFiles(await loads(['doctor', '--json']))).toEqual([]);
    // The probe sees them where the etcd store is chosen (here with an endpoint it refuses before any request).
    const etcd = { IDCLI_CREDENTIAL_STORE: 'etcd', IDCLI_ETCD_ENDPOINTS: 'http://192.0.2.1:2379' };
    expect(etcdFiles(await loads(['status'], etcd, 2))).not.toEqual([]);
  });
});

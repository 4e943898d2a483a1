// Needs a process: what a command loads at start-up shows only in a process started from a copy of the CLI.
/**
 * undici and open stay out of the built CLI's paths that do not use them: a copy of the CLI beside a node_modules
 * without them runs a cached token and a direct list, and only a proxied request reaches for undici.
 */
import { existsSync } from 'node:fs';
import { cp, mkdir, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../emulator/index.js';
import { cliEnv, listEnv, type ListEnv } from '../support/list.js';
import { BIN, type CliResult, ROOT, runCli, tempDir } from '../support/cli.js';
import { storeSignIn } from '../support/sign-in.js';
import { type ForwardProxy, startForwardProxy } from '../support/proxy.js';

let emu: Emulator;
let env: ListEnv & { cleanup: () => Promise<void> };
let proxy: ForwardProxy;

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('build the CLI first: npm run build');
});

beforeEach(async () => {
  emu = await startEmulator();
  env = await listEnv(emu, undefined);
  proxy = await startForwardProxy();
});

afterEach(async () => {
  await proxy.close();
  await emu.close();
  await env.cleanup();
});

describe('undici and open stay out of the paths that do not use them', () => {
  /**
   * The built CLI copied beside a node_modules that holds the keyring library only: a command whose path imported
   * undici or open, even without calling it, fails to load there.
   */
  async function withoutUndiciOrOpen(): Promise<{ bin: string; cleanup: () => Promise<void> }> {
    const dir = await tempDir('idcli-no-deps-');
    for (const part of ['bin', 'dist', 'package.json'])
      await cp(join(ROOT, part), join(dir.path, part), { recursive: true });
    await mkdir(join(dir.path, 'node_modules'));
    await symlink(join(ROOT, 'node_modules', '@napi-rs'), join(dir.path, 'node_modules', '@napi-rs'));
    const from = createRequire(join(dir.path, 'dist', 'cli.cjs'));
    for (const dep of ['undici', 'open']) expect(() => from.resolve(dep), dep).toThrow();
    return { bin: join(dir.path, 'bin', 'idcli.cjs'), cleanup: dir.cleanup };
  }

  function runBin(bin: string, args: string[], extra: Record<string, string | undefined> = {}): Promise<CliResult> {
    return runCli(args, { bin, env: cliEnv(env, extra), timeoutMs: 60_000 });
  }

  it('a cached token and a direct list run without undici or open installed; a proxied list needs undici', async () => {
    const copy = await withoutUndiciOrOpen();
    try {
      await storeSignIn({ emu, configDir: env.configDir, ttlSec: 3600 });
      const t = await runBin(copy.bin, ['token']);
      expect(t.stderr).toBe('');
      expect(t.code).toBe(0);
      expect(t.stdout).toMatch(/^\S+\n$/);
      const l = await runBin(copy.bin, ['list', '/v1/users', '--limit', '3']);
      expect(l.stderr).toBe('');
      expect(l.code).toBe(0);
      expect(l.stdout.split('\n').filter(Boolean)).toHaveLength(3);
      // The same copy with a proxy configured reaches for undici: the copy does lack it.
      const p = await runBin(copy.bin, ['list', '/v1/users', '--limit', '3'], { HTTP_PROXY: proxy.url });
      expect(p.code).not.toBe(0);
      expect(proxy.hits).toEqual([]);
    } finally {
      await copy.cleanup();
    }
  });
});

/**
 * Needs a process: only the single executable carries this code, so each test runs the executable.
 * The keychain addon of the single executable (src/exe/keyring.ts): written once to the user's private cache
 * directory under its SHA-256, loaded through the descriptor whose owner, mode and bytes checked out, written again
 * when they do not, and, where no private directory can hold it, no keychain, said on stderr with the reason. The
 * executable takes no Node options from NODE_OPTIONS. Only the
 * executable has this code, so these tests run when IDCLI_TEST_EXE names one (CI) and are skipped otherwise.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, copyFile, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KEYCHAIN_TESTABLE } from '../support/harness.js';
import { baseEnv, EXE, runCli, tempDir } from '../support/cli.js';
import { sha256 } from '../support/hash.js';

const run = promisify(execFile);
const ROOT_USER = process.getuid?.() === 0;
const NOBODY = 65534;
/** A C compiler, to build a library that stands for another user's code. */
const CC = ['/usr/bin/cc', '/usr/bin/gcc'].find((p) => existsSync(p));

let dir: { path: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  dir = await tempDir('idcli-addon-');
});
afterEach(() => dir.cleanup());

interface Check {
  id: string;
  status: string;
  detail: string;
}

/** doctor's verdict on the credential store, with idcli's cache under `cache`. */
async function storeCheck(cache: string): Promise<Check> {
  return (await doctor(cache)).check;
}

/** doctor's verdict on the credential store, and what the run said on stderr. */
async function doctor(cache: string): Promise<{ check: Check; stderr: string }> {
  const env = baseEnv({ XDG_CACHE_HOME: cache, IDCLI_CONFIG_DIR: join(dir.path, 'config') });
  const r = await runCli(['doctor', '--json'], { env });
  const checks = (JSON.parse(r.stdout) as { checks: Check[] }).checks;
  return { check: checks.find((c) => c.id === 'store')!, stderr: r.stderr };
}

async function addonFile(cache: string): Promise<string> {
  const names = (await readdir(join(cache, 'idcli'))).filter((n) => /^keyring-[0-9a-f]{64}\.node$/.test(n));
  expect(names).toHaveLength(1);
  return join(cache, 'idcli', names[0]!);
}

describe.runIf(EXE !== undefined && KEYCHAIN_TESTABLE)('the keychain addon of the executable', () => {
  it('is written once, 0700 directory and owner-only file, named by the SHA-256 of its bytes', async () => {
    const cache = join(dir.path, 'cache');
    expect(await storeCheck(cache)).toMatchObject({ status: 'pass' });
    const file = await addonFile(cache);
    expect((await stat(join(cache, 'idcli'))).mode & 0o777).toBe(0o700);
    expect((await stat(file)).mode & 0o077).toBe(0);
    const digest = sha256(await readFile(file));
    expect(file.endsWith(`keyring-${digest}.node`)).toBe(true);
    const written = (await stat(file)).mtimeMs;
    expect(await storeCheck(cache)).toMatchObject({ status: 'pass' });
    expect((await stat(file)).mtimeMs).toBe(written);
  });

  it('is written again when the file holds other bytes or others may read it', async () => {
    const cache = join(dir.path, 'cache');
    await storeCheck(cache);
    const file = await addonFile(cache);
    const good = await readFile(file);
    await chmod(file, 0o600);
    await writeFile(file, 'not the addon');
    expect(await storeCheck(cache)).toMatchObject({ status: 'pass' });
    expect((await readFile(file)).equals(good)).toBe(true);
    await chmod(file, 0o755);
    expect(await storeCheck(cache)).toMatchObject({ status: 'pass' });
    expect((await stat(file)).mode & 0o077).toBe(0);
  });

  it('tightens a cache directory of the user that others can enter to 0700, says so, and uses it', async () => {
    const cache = join(dir.path, 'cache');
    await mkdir(join(cache, 'idcli'), { recursive: true });
    await chmod(join(cache, 'idcli'), 0o755);
    const { check, stderr } = await doctor(cache);
    expect(check).toMatchObject({ status: 'pass' });
    expect(stderr).toContain(
      `warning: ${join(cache, 'idcli')} was accessible by other users (mode 0755); tightened to 0700\n`,
    );
    expect((await stat(join(cache, 'idcli'))).mode & 0o777).toBe(0o700);
    await addonFile(cache);
  });

  it("follows the user's own link (dotfiles) where the cache directory goes", async () => {
    const cache = join(dir.path, 'cache');
    await mkdir(join(dir.path, 'dotfiles', 'idcli'), { recursive: true, mode: 0o700 });
    await mkdir(cache, { mode: 0o700 });
    await symlink(join(dir.path, 'dotfiles', 'idcli'), join(cache, 'idcli'));
    expect((await doctor(cache)).check).toMatchObject({ status: 'pass' });
    await addonFile(join(dir.path, 'dotfiles'));
  });

  it.runIf(ROOT_USER)(
    'is not loaded from under a directory of another user: said once on stderr, nothing created, no keychain',
    async () => {
      const theirs = join(dir.path, 'theirs');
      const cache = join(theirs, 'cache');
      await mkdir(cache, { recursive: true });
      await chown(theirs, NOBODY, NOBODY);
      const { check, stderr } = await doctor(cache);
      expect(check.status).toBe('warn');
      expect(check.detail).toContain('storing credentials in');
      const said = `warning: the keychain is not used: refusing to use ${join(cache, 'idcli')}: ${theirs} is on the way to it, and it belongs to uid ${NOBODY}; set XDG_CACHE_HOME to a directory of your own that only you may write\n`;
      expect(stderr.split(said)).toHaveLength(2);
      expect(await readdir(cache)).toEqual([]);
    },
  );

  it('removes the temp file of an extraction that was killed, not that of one still running', async () => {
    const cache = join(dir.path, 'cache');
    await storeCheck(cache);
    const file = await addonFile(cache);
    const gone = spawnSync('true').pid!;
    const dead = `${file}.${gone}.tmp`;
    const running = `${file}.${process.pid}.tmp`;
    await writeFile(dead, 'half', { mode: 0o500 });
    await writeFile(running, 'half', { mode: 0o500 });
    expect(await storeCheck(cache)).toMatchObject({ status: 'pass' });
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(running)).toBe(true);
  });

  it('takes no Node options from NODE_OPTIONS', async () => {
    const marker = join(dir.path, 'required');
    const script = join(dir.path, 'inject.cjs');
    await writeFile(script, `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')\n`);
    const r = await runCli(['--version'], { env: baseEnv({ NODE_OPTIONS: `--require ${script}` }) });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(marker)).toBe(false);
  });

  it.runIf(CC !== undefined)(
    'loads the bytes it checked, while the file at its name is swapped with other code again and again',
    async () => {
      const cache = join(dir.path, 'cache');
      await storeCheck(cache);
      const file = await addonFile(cache);
      const marker = join(dir.path, 'other-code-ran');
      const other = join(dir.path, 'other.node');
      const source = join(dir.path, 'other.c');
      await writeFile(
        source,
        `#include <stdio.h>\n__attribute__((constructor)) static void ran(void) { FILE *f = fopen(${JSON.stringify(marker)}, "w"); if (f) fclose(f); }\n`,
      );
      await run(CC!, ['-shared', '-fPIC', '-o', other, source]);
      await chmod(other, 0o500);
      const good = join(dir.path, 'good.node');
      await copyFile(file, good);
      await chmod(good, 0o500);
      // The user's own racer (only the user may write the cache): the name holds the good file and the other in turn.
      const racer = spawn('python3', ['-c', SWAPPER, good, other, file], { stdio: 'ignore' });
      try {
        for (let i = 0; i < 40; i++) {
          await storeCheck(cache);
          expect(existsSync(marker), `run ${i}`).toBe(false);
        }
      } finally {
        racer.kill();
      }
    },
  );
});

/** Puts `good` and `other` at `name` in turn, each an atomic rename of a fresh hard link. */
const SWAPPER = `
import os, sys
good, other, name = sys.argv[1:4]
tmp = name + '.swap'
while True:
    for src in (good, other):
        try:
            os.link(src, tmp)
            os.rename(tmp, name)
        except OSError:
            pass
`;

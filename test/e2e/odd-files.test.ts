// Needs a process: a FIFO that blocks would hang the CLI, which only a process killed at a deadline shows.
/**
 * A FIFO (or anything but a regular file) where config.json, the credential record or the lock file should be is
 * refused at once instead of blocking, with the BUILT CLI in a process of its own.
 */
import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/file-store.js';
import { lockPathFor } from '../../src/store/lock.js';
import { cliEnv, list, eachTest } from '../support/list.js';
import { runCli } from '../support/cli.js';
import { storeSignIn } from '../support/sign-in.js';

const ctx = eachTest(['{"id":1}'], 'stored');

const key = () => ({ baseUrl: ctx.emu.baseUrl, clientId: ctx.emu.client.id, profile: 'default' });

async function mkfifo(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  execFileSync('mkfifo', ['-m', '600', path]);
}

/** Runs the CLI with a deadline well under the FIFO's "forever". */
function idcli(args: string[], extra: Record<string, string | undefined> = {}) {
  return runCli(args, { env: cliEnv(ctx.env, extra), timeoutMs: 15_000 });
}

describe('config.json', () => {
  it('a FIFO is refused with exit 2 instead of blocking', async () => {
    await mkfifo(join(ctx.env.configDir, 'config.json'));
    const r = await idcli(['status']);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/config\.json is not a regular file; remove it/);
  }, 30_000);
});

describe('the credential record', () => {
  it('a FIFO is refused with exit 2 (a local fault to remove) instead of blocking', async () => {
    const path = await new FileStore({ configDir: ctx.env.configDir }).pathFor(key());
    await mkfifo(path);
    const r = await idcli(['token']);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is not a regular file; remove it and run `idcli login`/);
  }, 30_000);
});

describe('the lock file', () => {
  it('a FIFO is refused with exit 2 (a local fault to remove) instead of blocking a refresh', async () => {
    await storeSignIn({ emu: ctx.emu, configDir: ctx.env.configDir, ttlSec: -10 });
    await mkfifo(lockPathFor(ctx.env.configDir, key()));
    const r = await idcli(['token']);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\.lock is not a regular file, so it cannot serve as a lock; remove it/);
  }, 30_000);

  it('`list` with a FIFO lock ends at once too (it used to ignore Ctrl-C there)', async () => {
    await storeSignIn({ emu: ctx.emu, configDir: ctx.env.configDir, ttlSec: -10 });
    await mkfifo(lockPathFor(ctx.env.configDir, key()));
    const started = Date.now();
    const r = await list(ctx.env, ['/v1/items'], { timeoutMs: 45_000 });
    expect(r.signal).toBeNull();
    expect(r.code).toBe(2);
    // Well below the 30 s lock timeout a waiter would sit out, with room for a loaded machine's start-up.
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r.requests).toHaveLength(0);
  }, 60_000);
});

/**
 * The temp files of a writer killed mid-write, met through the built CLI.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/file-store.js';
import { encodeRecord } from '../../src/store/record.js';
import { deadPid } from '../store/support.js';
import { describeEachStore, type Harness, harness, login, type StoreKind } from './harness.js';

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

const configDirOf = (h: Harness) => join(h.dir, 'config');
const credentialsDirOf = (h: Harness) => join(configDirOf(h), 'credentials');
const recordPathOf = (h: Harness) => new FileStore({ configDir: configDirOf(h) }).pathFor(h.key());
async function newHarness(store: StoreKind): Promise<Harness> {
  const h = await harness({ store });
  cleanups.push(() => h.close());
  return h;
}

/** What a writer killed between its write and its rename leaves: the new record, under its temp name. */
async function orphanTemp(h: Harness, pid: number): Promise<string> {
  const record = await recordPathOf(h);
  const tmp = `${record}.${pid}.0a1b2c3d4e5f.tmp`;
  await mkdir(credentialsDirOf(h), { recursive: true, mode: 0o700 });
  await writeFile(tmp, `${encodeRecord((await h.record())!)}\n`, { mode: 0o600 });
  return tmp;
}

describe('temp files of writers killed mid-write', () => {
  it('the next write removes those of writers that are gone, and leaves a running writer its own (file store)', async () => {
    const h = await newHarness('file');
    await login(h);
    const dead = await orphanTemp(h, await deadPid());
    const live = `${await recordPathOf(h)}.${process.pid}.0f1e2d3c4b5a.tmp`;
    await writeFile(live, '', { mode: 0o600 });
    const r = await h.run(['token', '--refresh']);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(await readFile(await recordPathOf(h), 'utf8')).toContain(r.stdout.trim());
  });

  describeEachStore('logout', (store) => {
    it('removes them with the sign-in', async () => {
      const h = await newHarness(store);
      await login(h);
      const dead = await orphanTemp(h, await deadPid());
      const r = await h.run(['logout']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/Signed out/);
      expect(existsSync(dead)).toBe(false);
    });
  });
});

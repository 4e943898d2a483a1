/**
 * `idcli list -o FILE`'s one-writer claim (docs/cli.md, "One writer per FILE") against what a killed run, an older
 * idcli or anyone else left where the claim goes: whatever it holds, a single run takes it over or refuses naming it
 * (exit 2), never exit 1. In this process (runCommand); runs started together on one FILE, of which exactly one
 * writes, race as processes in test/e2e/list-dump-claim.test.ts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { claimOf, completes as claimFreeRun, exists, holder, plantClaimDir } from '../support/dump-claim.js';
import { eachDump, listCommand, ndjson, plainItems, seq } from '../support/list.js';
import { deadPid } from '../support/store.js';

const ITEMS = plainItems(250);

const ctx = eachDump(ITEMS);

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** A process of this machine that is not idcli, running until the test ends. */
function otherProcess(): number {
  const c = spawn('sleep', ['600'], { stdio: 'ignore' });
  children.push(c);
  if (c.pid === undefined) throw new Error('sleep did not start');
  return c.pid;
}

const completes = (file: string) => claimFreeRun(ctx.env, file, ITEMS);

describe('idcli list -o FILE: a claim no live run holds is taken over', () => {
  it('a reaper file left beside a stale claim, empty, garbage, a directory or naming a live pid, does not block FILE', async () => {
    const file = ctx.out;
    const reaper = `${claimOf(file)}.reap`;
    const dead = await deadPid();
    const kinds: Array<[string, () => Promise<void>]> = [
      ['empty', () => writeFile(reaper, '')],
      ['garbage', () => writeFile(reaper, 'not a pid\n')],
      ['a directory', () => mkdir(reaper)],
      ['a live pid not of idcli', () => writeFile(reaper, `${otherProcess()}\n`)],
    ];
    for (const [what, plant] of kinds) {
      await plant();
      await writeFile(claimOf(file), holder(dead));
      const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', file]);
      expect(r.code, `${what}: ${r.stderr}`).toBe(0);
      expect(await readFile(file, 'utf8')).toBe(ndjson(ITEMS));
      expect(await exists(claimOf(file))).toBe(false);
      await rm(reaper, { recursive: true });
    }
  });

  it('a live process that is not an idcli run is not taken for the holder, with or without a start time', async () => {
    const file = ctx.out;
    const pid = otherProcess();
    await writeFile(claimOf(file), holder(pid));
    await completes(file);
    await plantClaimDir(file, 'tag', holder(pid));
    await completes(file);
    await plantClaimDir(file, 'tag', holder(pid, { start: 'another boot/1' }));
    await completes(file);
  });

  it('a claim naming pid 0, -1, 1.5 or a pid too large is garbage, and taken over', async () => {
    const file = ctx.out;
    for (const pid of [0, -1, 1.5, 2 ** 53, '1']) {
      await writeFile(claimOf(file), holder(pid));
      await completes(file);
      await plantClaimDir(file, 'tag', holder(pid));
      await completes(file);
    }
  });

  it('a claim over 4 kB, as a file or as the record in a claim, is taken over, never exit 1', async () => {
    const file = ctx.out;
    const big = `${holder(process.pid).trimEnd()}${' '.repeat(5000)}\n`;
    await writeFile(claimOf(file), big);
    await completes(file);
    await plantClaimDir(file, 'tag', big);
    await completes(file);
  });
});

describe('idcli list -o FILE: what is not a claim of idcli is refused naming it', () => {
  it('several entries, or a record that is a link or a directory: exit 2 naming the claim, no request', async () => {
    const file = ctx.out;
    const claim = claimOf(file);
    const plants: Array<() => Promise<void>> = [
      async () => {
        await plantClaimDir(file, 'a', holder(1));
        await writeFile(join(claim, 'b'), holder(1));
      },
      async () => {
        await mkdir(join(claim, 'sub'), { recursive: true });
      },
    ];
    for (const plant of plants) {
      await plant();
      const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', file]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`refusing to use ${claim}`);
      expect(r.stderr).toContain(`remove ${claim} (rm -r)`);
      expect(r.requests).toEqual([]);
      await rm(claim, { recursive: true });
    }
  });
});

/**
 * What `idcli list -o FILE` must leave when its writes fail in the middle of the walk, whether the disk filled
 * (test/commands/list/dump-disk.test.ts) or a file-size limit was met (test/e2e/list-dump-disk.test.ts): the same
 * path in idcli, so the same checks.
 */
import { readFile, stat } from 'node:fs/promises';
import { expect } from 'vitest';
import type { CliResult } from './cli.js';
import { sha256 } from './hash.js';
import { listCommand, type ListEnv } from './list.js';

/** What the checks read of a run: a run in a shell gives no more. */
type Run = Pick<CliResult, 'code' | 'stderr'>;

export interface WriteFault {
  /** FILE, and its state beside it. */
  out: string;
  state: string;
  /** What a clean run writes to stdout, in pages of `pageItems` of `items` items. */
  clean: Buffer;
  items: number;
  pageItems: number;
  /** The bytes FILE could take at the most. */
  room: number;
}

/**
 * The command that writes FILE `out` in pages of 1000 items, FILE's state, and what a clean run writes to stdout: the
 * bytes FILE must hold at the end.
 */
export async function cleanDump(env: ListEnv, out: string): Promise<{ args: string[]; state: string; clean: Buffer }> {
  const clean = await listCommand(env, ['/v1/items', '--page-size', '1000']);
  expect(clean.code).toBe(0);
  return {
    args: ['/v1/items', '--page-size', '1000', '-o', out],
    state: `${out}.idcli-state`,
    clean: clean.stdoutBytes,
  };
}

/**
 * The run stopped with exit 1 naming the write fault, and its state matches FILE: FILE is the clean run's bytes up to
 * the last whole page, and no page that would have fitted was dropped. Returns the items the state records.
 */
export async function expectStoppedAtWholePage(first: Run, f: WriteFault): Promise<number> {
  expect(first.code, first.stderr).toBe(1);
  expect(first.stderr).toMatch(/cannot write the output \((ENOSPC|EFBIG)\)/);
  expect(first.stderr).toMatch(/stopped after \d+ items in .*; run the same command again to continue/);
  const saved = JSON.parse(await readFile(f.state, 'utf8')) as { bytes: number; items: number };
  const file = await readFile(f.out);
  expect(saved.items).toBeGreaterThan(0);
  // FILE ends with the last page the state records: nothing of the page that did not fit is left.
  expect(file.length).toBe(saved.bytes);
  expect(file.equals(f.clean.subarray(0, saved.bytes))).toBe(true);
  expect(saved.items).toBe(file.toString().split('\n').length - 1);
  // Every whole page that fitted is kept: the next page, and the state's own block, would not have fitted too.
  const page = Math.ceil(f.clean.length / (f.items / f.pageItems));
  expect(saved.bytes + page + 8192).toBeGreaterThan(f.room);
  return saved.items;
}

/** The re-run resumed after the `items` saved and completed FILE as the clean run wrote it, its state gone. */
export async function expectResumedToEnd(again: Run, f: WriteFault, items: number): Promise<void> {
  expect(again.code, again.stderr).toBe(0);
  expect(again.stderr).toContain(`resuming ${f.out} after ${items} items`);
  expect(sha256(await readFile(f.out))).toBe(sha256(f.clean));
  await expect(stat(f.state)).rejects.toThrow();
}

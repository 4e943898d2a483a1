/**
 * What `idcli list -o FILE`'s one-writer claim looks like beside FILE (docs/cli.md, "One writer per FILE"), for tests
 * that plant one: in this process where a single run meets it, in test/e2e/ where runs race for it.
 */
import { lstat, mkdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { listCommand, type ListEnv, ndjson } from './list.js';

/** Where the claim on `file` goes. */
export const claimOf = (file: string): string => `${file}.idcli-run`;

/** A claim's record naming `pid` on this host, with `extra` members (a start time, say). */
export const holder = (pid: unknown, extra: Record<string, unknown> = {}): string =>
  `${JSON.stringify({ pid, host: hostname(), nonce: 'n', ...extra })}\n`;

/** A claim as this idcli makes it: a directory holding one record. */
export async function plantClaimDir(file: string, name: string, content: string | Uint8Array): Promise<void> {
  await mkdir(claimOf(file), { mode: 0o700 });
  await writeFile(join(claimOf(file), name), content, { mode: 0o600 });
}

/** Whether anything, a dangling link too, stands at `path`. */
export const exists = (path: string): Promise<boolean> =>
  lstat(path).then(
    () => true,
    () => false,
  );

/** A run in this process on `file` completes it with `items`, one page at a time, and leaves no claim behind. */
export async function completes(env: ListEnv, file: string, items: readonly string[]): Promise<void> {
  const r = await listCommand(env, ['/v1/items', '--concurrency', '1', '-o', file]);
  expect(r.code, r.stderr).toBe(0);
  expect(await readFile(file, 'utf8')).toBe(ndjson(items));
  expect(await exists(claimOf(file))).toBe(false);
}

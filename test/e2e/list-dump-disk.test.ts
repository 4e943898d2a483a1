/**
 * Needs a process: a file-size limit (`ulimit -f`) is set on a process of its own, whose write(2) then fails (EFBIG).
 * `idcli list -o FILE` when its writes fail in the middle of the walk: exit 1, and a state that still matches FILE
 * (its length, and the clean run's bytes); without the limit, the same command completes FILE. The limit takes the
 * path in idcli that a full disk takes, which test/commands/list/dump-disk.test.ts meets in process on a small tmpfs.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { sha256 } from '../support/hash.js';
import { cliEnv, eachTest, listCommand, type ListEnv, plainItems, shell } from '../support/list.js';

let env: ListEnv & { cleanup: () => Promise<void> };
const ITEMS = plainItems(60_000);
eachTest(ITEMS, (_, v) => {
  env = v;
});

/** The largest file the run under the limit may write: what the full disk of the in-process test leaves. */
const LIMIT_BYTES = 848 * 1024;

describe('idcli list -o FILE when the disk fills in the middle (a file-size limit (ulimit -f, EFBIG))', () => {
  it('exit 1, the state still matches FILE; after space is freed the same command completes it', async () => {
    const out = join(env.configDir, 'items.ndjson');
    const state = `${out}.idcli-state`;
    const args = ['/v1/items', '--page-size', '1000', '-o', out];
    const clean = await listCommand(env, ['/v1/items', '--page-size', '1000']);
    expect(clean.code).toBe(0);
    const cleanBytes = clean.stdoutBytes;
    // FILE needs more than the limit allows.
    expect(cleanBytes.length).toBeGreaterThan(LIMIT_BYTES);

    const room = LIMIT_BYTES;
    const quoted = args.map((a) => `'${a}'`).join(' ');
    const first = await shell(
      `ulimit -f ${LIMIT_BYTES / 1024}; exec '${process.execPath}' '${BIN}' list ${quoted}`,
      cliEnv(env),
    );
    expect(first.code, first.stderr).toBe(1);
    expect(first.stderr).toMatch(/cannot write the output \((ENOSPC|EFBIG)\)/);
    expect(first.stderr).toMatch(/stopped after \d+ items in .*; run the same command again to continue/);
    const saved = JSON.parse(await readFile(state, 'utf8')) as { bytes: number; items: number };
    const file = await readFile(out);
    expect(saved.items).toBeGreaterThan(0);
    // FILE ends with the last page the state records: nothing of the page that did not fit is left.
    expect(file.length).toBe(saved.bytes);
    expect(file.equals(cleanBytes.subarray(0, saved.bytes))).toBe(true);
    expect(saved.items).toBe(file.toString().split('\n').length - 1);
    // Every whole page that fitted is kept: the next page, and the state's own block, would not have fitted too.
    const page = Math.ceil(cleanBytes.length / (ITEMS.length / 1000));
    expect(saved.bytes + page + 8192).toBeGreaterThan(room);

    const again = await listCommand(env, args);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`resuming ${out} after ${saved.items} items`);
    const done = await readFile(out);
    expect(sha256(done)).toBe(sha256(cleanBytes));
    await expect(stat(state)).rejects.toThrow();
  }, 120_000);
});

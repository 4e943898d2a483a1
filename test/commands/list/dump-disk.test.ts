/**
 * `idcli list -o FILE` on a disk that fills in the middle of the walk: exit 1, and a state that still matches FILE
 * (its length, and the clean run's bytes); once space is freed, the same command completes FILE.
 *
 * The disk is a small tmpfs mounted for the test, with a filler file taking most of it, and the runs are in this
 * process (runCommand). Where mounting is not allowed (not root, or a container without the capability), these tests
 * are skipped; test/e2e/list-dump-disk.test.ts meets a real file-size limit instead (`ulimit -f`: write(2) fails with
 * EFBIG), which takes the same path in idcli and which only a process of its own gets.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { open, readFile, rm, statfs, writeFile } from 'node:fs/promises';
import { overwriteState, parseState, writeState } from '../../../src/output/dump-state.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eachTest, listCommand, plainItems } from '../../support/list.js';
import { cleanDump, expectResumedToEnd, expectStoppedAtWholePage } from '../../support/write-fault.js';

const ITEMS = plainItems(60_000);
const ctx = eachTest(ITEMS);

// A fresh name: mount follows a link, so a name another user could guess and plant a link at first (in the shared
// temp directory) would put the tmpfs over a directory of their choice.
const DISK = mkdtempSync(join(tmpdir(), 'idcli-full-disk-'));
const DISK_BYTES = 2 * 1024 * 1024;
const FILLER_BYTES = 1200 * 1024;

/**
 * Mounts a 2 MiB tmpfs at DISK; false when this machine does not let the test mount one (or IDCLI_TEST_NO_MOUNT=1,
 * to see these tests skipped where mounting works).
 */
function mountSmallDisk(): boolean {
  if (process.env.IDCLI_TEST_NO_MOUNT === '1') return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${DISK_BYTES},mode=0700`, 'tmpfs', DISK], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const mounted = mountSmallDisk();
afterAll(() => {
  if (mounted) execFileSync('umount', [DISK]);
  execFileSync('rm', ['-rf', DISK]);
});

describe('idcli list -o FILE when the disk fills in the middle (a 2 MiB tmpfs filled by another file)', () => {
  it.runIf(mounted)(
    'exit 1, the state still matches FILE; after space is freed the same command completes it',
    async () => {
      const out = join(DISK, 'items.ndjson');
      const { args, state, clean: cleanBytes } = await cleanDump(ctx.env, out);
      // FILE needs more than what is left on the disk.
      expect(cleanBytes.length).toBeGreaterThan(DISK_BYTES - FILLER_BYTES);

      await writeFile(join(DISK, 'filler'), Buffer.alloc(FILLER_BYTES));
      const fs = await statfs(DISK);
      const room = fs.bavail * fs.bsize;
      const fault = { out, state, clean: cleanBytes, items: ITEMS.length, pageItems: 1000, room };
      const saved = await expectStoppedAtWholePage(await listCommand(ctx.env, args), fault);

      await rm(join(DISK, 'filler'));
      await expectResumedToEnd(await listCommand(ctx.env, args), fault, saved);
    },
    120_000,
  );

  it.runIf(mounted)(
    "a disk with no room for the state's temp: the state is written in place over the last one",
    async () => {
      const state = join(DISK, 'in-place.ndjson.idcli-state');
      const walk = {
        target: '/v1/items',
        apiBaseUrl: 'http://127.0.0.1:1',
        profile: 'default',
        pageSize: null,
        pageIndex: null,
      };
      const at = (items: number) => ({
        walk,
        next: `http://127.0.0.1:1/v1/items?pageIndex=${items / 1000}`,
        items,
        bytes: items * 20,
        tail: '',
      });
      writeState(state, at(1000));
      // Every byte of the disk taken, as a walk that filled it leaves it.
      const filler = join(DISK, 'all-of-it');
      const fh = await open(filler, 'w');
      try {
        for (;;) await fh.write(Buffer.alloc(64 * 1024));
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
      }
      for (;;) {
        try {
          await fh.write(Buffer.alloc(1));
        } catch {
          break;
        }
      }
      await fh.close();
      try {
        expect(() => writeState(state, at(2000))).toThrow(/ENOSPC/);
        overwriteState(state, at(123_000));
        expect(parseState(await readFile(state, 'utf8'))).toEqual(at(123_000));
      } finally {
        await rm(filler);
      }
    },
  );
});

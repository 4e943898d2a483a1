/**
 * Needs a process: a file-size limit (`ulimit -f`) is set on a process of its own, whose write(2) then fails (EFBIG).
 * `idcli list -o FILE` when its writes fail in the middle of the walk: exit 1, and a state that still matches FILE
 * (its length, and the clean run's bytes); without the limit, the same command completes FILE. The limit takes the
 * path in idcli that a full disk takes, which test/commands/list/dump-disk.test.ts meets in process on a small tmpfs.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { cliEnv, eachTest, listCommand, plainItems, shell } from '../support/list.js';
import { cleanDump, expectResumedToEnd, expectStoppedAtWholePage } from '../support/write-fault.js';

const ITEMS = plainItems(60_000);
const ctx = eachTest(ITEMS);

/** The largest file the run under the limit may write: what the full disk of the in-process test leaves. */
const LIMIT_BYTES = 848 * 1024;

describe('idcli list -o FILE when the disk fills in the middle (a file-size limit (ulimit -f, EFBIG))', () => {
  it('exit 1, the state still matches FILE; after space is freed the same command completes it', async () => {
    const out = join(ctx.env.configDir, 'items.ndjson');
    const { args, state, clean: cleanBytes } = await cleanDump(ctx.env, out);
    // FILE needs more than the limit allows.
    expect(cleanBytes.length).toBeGreaterThan(LIMIT_BYTES);

    const room = LIMIT_BYTES;
    const quoted = args.map((a) => `'${a}'`).join(' ');
    const first = await shell(
      `ulimit -f ${LIMIT_BYTES / 1024}; exec '${process.execPath}' '${BIN}' list ${quoted}`,
      cliEnv(ctx.env),
    );
    const fault = { out, state, clean: cleanBytes, items: ITEMS.length, pageItems: 1000, room };
    const saved = await expectStoppedAtWholePage(first, fault);

    await expectResumedToEnd(await listCommand(ctx.env, args), fault, saved);
  }, 120_000);
});

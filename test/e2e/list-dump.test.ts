// Needs a process: each stop signal is sent to the CLI's own process, and its exit code is the signal's.
/**
 * `idcli list -o FILE` stopped by a signal mid-walk: the stop line and what FILE holds, through the built CLI (or the
 * single executable under IDCLI_TEST_EXE) against the emulator; then the re-run that completes it, in this process.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { eachDump, list, listCommand, ndjson, plainItems, signalAtThirdPage, seq } from '../support/list.js';

const ITEMS = plainItems(250);

const ctx = eachDump(ITEMS);

describe('idcli list -o FILE', () => {
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
    ['SIGHUP', 129],
  ] as const) {
    it(`${signal}: exit ${code}, the stop line says to run the same command, which completes FILE`, async () => {
      const r = await list(ctx.env, ['/v1/items', ...seq, '-o', ctx.out], signalAtThirdPage(ctx.emu, signal));
      expect(r.code).toBe(code);
      expect(r.stderr).toContain(`stopped after 200 items in ${ctx.out}; run the same command again to continue`);
      expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS.slice(0, 200)));
      ctx.emu.clearFaults();
      const again = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
      expect(again.code, again.stderr).toBe(0);
      expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS));
    }, 60_000);
  }
});

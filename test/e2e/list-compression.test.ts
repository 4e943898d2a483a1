// Needs a process: GNU time measures the peak resident memory and the CPU time of the CLI's own process at a gzip bomb.
/**
 * A page that inflates to 1 GiB, through the BUILT CLI against the emulator. That it stops early is judged by the
 * work its process did (CPU seconds, which a loaded machine does not inflate as it does wall time), not by a clock.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { generateRecords } from '../emulator/index.js';
import { cliEnv, eachTest, shell } from '../support/list.js';

const RECORDS = generateRecords(400);
const ctx = eachTest([]);
beforeEach(() => {
  ctx.emu.setCollection('/v1/records', { type: 'offset', items: [...RECORDS] });
});

/** The requests the emulator saw for `path`. */
function seen(path: string): unknown[] {
  return ctx.emu.requests.filter((r) => r.path === path);
}

describe('idcli list: compressed transfer', () => {
  it('a page that inflates to 1 GiB stops within seconds, asked once, with memory bounded', async () => {
    ctx.emu.inject({ path: '/v1/records', nth: 1, fault: { kind: 'gzip-bomb' } });
    // GNU time reports the child's peak resident set in KiB, and its user and system CPU seconds.
    const out = await shell(
      `/usr/bin/time -f 'peak-rss-kib=%M cpu-s=%U+%S' node "${BIN}" list /v1/records; echo "exit=$?" >&2`,
      cliEnv(ctx.env),
    );
    expect(out.stdout).toBe('');
    expect(out.stderr).toMatch(/response too large \(over \d+ bytes decoded\)/);
    expect(out.stderr).toMatch(/exit=4/);
    const rss = Number(/peak-rss-kib=(\d+)/.exec(out.stderr)?.[1]);
    expect(rss).toBeGreaterThan(10_000);
    expect(rss).toBeLessThan(150 * 1024);
    // Inflating the whole GiB alone would take seconds of CPU; start-up and the first megabytes, a fraction of that.
    const [user, sys] = /cpu-s=([\d.]+)\+([\d.]+)/.exec(out.stderr)!.slice(1).map(Number);
    expect(user! + sys!).toBeLessThan(2);
    expect(seen('/v1/records')).toHaveLength(1);
  }, 60_000);
});

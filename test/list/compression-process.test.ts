// A process: GNU time measures the peak resident memory of the CLI's own process while it meets a gzip bomb.
/** A page that inflates to 1 GiB, through the BUILT CLI against the emulator. */
import { describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { type Emulator, generateRecords } from '../emulator/index.js';
import { cliEnv, eachTest, type ListEnv, shell } from './helpers.js';

const RECORDS = generateRecords(400);
let emu: Emulator;
let env: ListEnv;
eachTest([], (e, v) => {
  emu = e;
  env = v;
  emu.setCollection('/v1/records', { type: 'offset', items: [...RECORDS] });
});

/** The requests the emulator saw for `path`. */
function seen(path: string): unknown[] {
  return emu.requests.filter((r) => r.path === path);
}

describe('idcli list: compressed transfer', () => {
  it('a page that inflates to 1 GiB stops within seconds, asked once, with memory bounded', async () => {
    emu.inject({ path: '/v1/records', nth: 1, fault: { kind: 'gzip-bomb' } });
    const started = Date.now();
    // GNU time reports the child's peak resident set in KiB.
    const out = await shell(
      `/usr/bin/time -f 'peak-rss-kib=%M' node "${BIN}" list /v1/records; echo "exit=$?" >&2`,
      cliEnv(env),
    );
    const elapsed = Date.now() - started;
    expect(out.stdout).toBe('');
    expect(out.stderr).toMatch(/response too large \(over \d+ bytes decoded\)/);
    expect(out.stderr).toMatch(/exit=4/);
    const rss = Number(/peak-rss-kib=(\d+)/.exec(out.stderr)?.[1]);
    expect(rss).toBeGreaterThan(10_000);
    expect(rss).toBeLessThan(150 * 1024);
    expect(elapsed).toBeLessThan(20_000);
    expect(seen('/v1/records')).toHaveLength(1);
  }, 60_000);
});

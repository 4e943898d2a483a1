// Needs a process: these are about the CLI's own process, under node --jitless and writing into a pipe `head` closes.
/** `idcli list` as the BUILT CLI in a child process against the emulator. */
import { describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { awkward, cliEnv, eachEmulator, list, ndjson, plainItems, shell } from '../support/list.js';

const ctx = eachEmulator();

describe('idcli list: lossless NDJSON', () => {
  it('writes the same bytes under node --jitless (interpreter only)', async () => {
    const { raw, expected } = awkward(57);
    ctx.emu.setCollection('/v1/awkward', { type: 'offset', items: raw, pretty: true });
    const r = await list(ctx.env, ['/v1/awkward', '--page-size', '10'], { extraEnv: { NODE_OPTIONS: '--jitless' } });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(expected));
    // V8's own notice that --jitless turns WebAssembly off is all there may be on stderr.
    expect(r.stderr.replace(/^Warning: disabling flag --expose_wasm due to conflicting flags\n/, '')).toBe('');
  }, 60_000);
});

describe('idcli list: the reader goes away', () => {
  it('| head -n 5: exit 0, five lines, no error and only a few requests', async () => {
    // A page of about 100 kB, more than a pipe holds (64 kB on Linux): whether `head` gets the CPU early or late,
    // idcli cannot run ahead of its reader by more than a page and the one being fetched behind it.
    const items = plainItems(5000).map((item) => item.replace(/}$/, `,"pad":"${'x'.repeat(1000)}"}`));
    ctx.emu.setCollection('/v1/big', { type: 'offset', items });
    const before = ctx.emu.requests.length;
    const script = `node "${BIN}" list /v1/big --page-size 100 | head -n 5; echo "exit=\${PIPESTATUS[0]}" >&2`;
    // Async: the emulator lives in this process and must keep serving while the pipeline runs.
    const out = await shell(script, cliEnv(ctx.env));
    expect(out.stdout.split('\n')).toEqual([...items.slice(0, 5), '']);
    expect(out.stderr).toBe('exit=0\n');
    const requests = ctx.emu.requests.slice(before).filter((q) => q.path === '/v1/big');
    expect(requests.length).toBeLessThanOrEqual(5);
  }, 60_000);
});

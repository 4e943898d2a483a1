/**
 * `idcli list -o FILE`: FILE and its state, and a re-run that continues where the last run stopped, run in this
 * process against the emulator (the built CLI, or the single executable under IDCLI_TEST_EXE; stop signals are in
 * test/e2e/list-dump.test.ts). The walks here go one page at a time (--concurrency 1) unless the test is about pages in
 * flight, so the count of requests tells how far FILE is.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, rmdir, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeEach, describe, expect, it } from 'vitest';
import { eachDump, listCommand, ndjson, plainItems, seq, failFrom } from '../../support/list.js';

const ITEMS = plainItems(250);
let state: string;

const ctx = eachDump(ITEMS);
beforeEach(() => {
  state = `${ctx.out}.idcli-state`;
});
const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );
const readState = async () =>
  JSON.parse(await readFile(state, 'utf8')) as { next: string; items: number; bytes: number; walk: object };

describe('idcli list -o FILE', () => {
  it('writes the items to FILE, private, nothing on stdout, and leaves no state when complete', async () => {
    const r = await listCommand(ctx.env, ['/v1/items', '-o', ctx.out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS));
    expect((await stat(ctx.out)).mode & 0o777).toBe(0o600);
    expect(await exists(state)).toBe(false);
    expect(await exists(`${state}.tmp`)).toBe(false);
  });

  it('`-o -` is stdout', async () => {
    const r = await listCommand(ctx.env, ['/v1/items', '-o', '-']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(ndjson(ITEMS));
  });

  it('an empty collection still leaves an empty FILE; --limit 0 too', async () => {
    ctx.emu.setCollection('/v1/none', { type: 'offset', items: [] });
    expect((await listCommand(ctx.env, ['/v1/none', '-o', ctx.out])).code).toBe(0);
    expect(await readFile(ctx.out, 'utf8')).toBe('');
    const zero = join(ctx.env.configDir, 'zero.ndjson');
    expect((await listCommand(ctx.env, ['/v1/items', '--limit', '0', '-o', zero])).code).toBe(0);
    expect(await readFile(zero, 'utf8')).toBe('');
  });

  it('a FILE without a state is overwritten, like curl -o', async () => {
    await writeFile(ctx.out, 'something else\n'.repeat(1000));
    const r = await listCommand(ctx.env, ['/v1/items', '-o', ctx.out]);
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS));
  });

  it('a failure before the first page creates nothing', async () => {
    failFrom(ctx.emu, 1);
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
    expect(r.code).toBe(4);
    expect(await exists(ctx.out)).toBe(false);
    expect(await exists(state)).toBe(false);
    expect(r.stderr).not.toContain('stopped after');
  });

  it('exit 4, then the same command continues: FILE is byte-identical, the pages before are not fetched again', async () => {
    failFrom(ctx.emu, 3);
    const first = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
    expect(first.code).toBe(4);
    expect(first.stderr).toContain(
      `idcli: stopped after 200 items in ${ctx.out}; run the same command again to continue`,
    );
    expect(first.stderr).not.toContain('resume with');
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS.slice(0, 200)));
    const s = await readState();
    expect(s).toMatchObject({ items: 200, bytes: Buffer.byteLength(ndjson(ITEMS.slice(0, 200))) });
    expect(s.next).toBe(`${ctx.emu.baseUrl}/v1/items?pageIndex=2&pageSize=100`);
    expect((await stat(state)).mode & 0o777).toBe(0o600);

    ctx.emu.clearFaults();
    const again = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`idcli: resuming ${ctx.out} after 200 items`);
    expect(again.requests).toEqual([`/v1/items?pageIndex=2&pageSize=100`]);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS));
    expect(await exists(state)).toBe(false);
  });

  it('--quiet leaves out the resume note, never the stop line', async () => {
    failFrom(ctx.emu, 3);
    const first = await listCommand(ctx.env, ['/v1/items', ...seq, '--quiet', '-o', ctx.out]);
    expect(first.code).toBe(4);
    expect(first.stderr).toContain('stopped after 200 items');
    ctx.emu.clearFaults();
    const again = await listCommand(ctx.env, ['/v1/items', ...seq, '--quiet', '-o', ctx.out]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toBe('');
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS));
  });

  it('a page half written when the process died is cut off on the re-run', async () => {
    failFrom(ctx.emu, 3);
    expect((await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out])).code).toBe(4);
    // What a run killed in the middle of its third page leaves: bytes past the state's length.
    await writeFile(ctx.out, `${await readFile(ctx.out, 'utf8')}{"id":"i200","n":2`);
    ctx.emu.clearFaults();
    const again = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
    expect(again.code, again.stderr).toBe(0);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS));
  });

  it('with pages in flight, the state counts only the pages written in order', async () => {
    const many = plainItems(2000);
    ctx.emu.setCollection('/v1/items', { type: 'offset', items: many });
    // The fifth request fails; the pages after it may arrive, but are not written before it.
    failFrom(ctx.emu, 5);
    const first = await listCommand(ctx.env, ['/v1/items', '--concurrency', '4', '-o', ctx.out]);
    expect(first.code).toBe(4);
    const s = await readState();
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(many.slice(0, s.items)));
    expect(s.bytes).toBe((await stat(ctx.out)).size);
    ctx.emu.clearFaults();
    const again = await listCommand(ctx.env, ['/v1/items', '--concurrency', '4', '-o', ctx.out]);
    expect(again.code, again.stderr).toBe(0);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(many));
  });

  it('--limit counts the items already in FILE', async () => {
    failFrom(ctx.emu, 3);
    expect((await listCommand(ctx.env, ['/v1/items', ...seq, '--limit', '230', '-o', ctx.out])).code).toBe(4);
    expect((await readState()).items).toBe(200);
    ctx.emu.clearFaults();
    const again = await listCommand(ctx.env, ['/v1/items', ...seq, '--limit', '230', '-o', ctx.out]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.requests).toHaveLength(1);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS.slice(0, 230)));
    expect(await exists(state)).toBe(false);
  });

  it('a re-run whose --limit the items in FILE already reach completes without a request', async () => {
    failFrom(ctx.emu, 3);
    expect((await listCommand(ctx.env, ['/v1/items', ...seq, '--limit', '240', '-o', ctx.out])).code).toBe(4);
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '--limit', '200', '-o', ctx.out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.requests).toEqual([]);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS.slice(0, 200)));
    expect(await exists(state)).toBe(false);
  });

  it('a state from another walk is exit 2 naming the setting that differs and --restart; FILE is untouched', async () => {
    failFrom(ctx.emu, 3);
    expect((await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out])).code).toBe(4);
    ctx.emu.clearFaults();
    const before = await readFile(ctx.out);
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['/v1/items', '--page-size', '50'], {}, /--page-size differs \(not given there, 50 here\)/],
      [['/v1/items', '--page-index', '1'], {}, /--page-index differs/],
      [['/v1/items?x=1'], {}, /the target differs \("\/v1\/items" there, "\/v1\/items\?x=1" here\)/],
      [['/v1/items'], { IDCLI_PROFILE: 'other' }, /the profile differs \("default" there, "other" here\)/],
      [['items'], { IDCLI_API_BASE_URL: `${ctx.emu.baseUrl}/v1` }, /the target differs/],
    ];
    for (const [args, extraEnv, said] of cases) {
      const r = await listCommand(ctx.env, [...args, ...seq, '-o', ctx.out], { extraEnv });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(said);
      expect(r.stderr).toContain('holds part of another walk');
      expect(r.stderr).toContain('--restart');
      expect(r.requests).toEqual([]);
      expect(await readFile(ctx.out)).toEqual(before);
    }
    // The same command still continues it.
    const again = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
    expect(again.code, again.stderr).toBe(0);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS));
  });

  it('--restart discards the state and starts over, also with another walk', async () => {
    failFrom(ctx.emu, 3);
    expect((await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out])).code).toBe(4);
    ctx.emu.clearFaults();
    const r = await listCommand(ctx.env, ['/v1/items', '--page-size', '50', ...seq, '-o', ctx.out, '--restart']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('resuming');
    expect(r.requests[0]).toBe('/v1/items?pageSize=50');
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS));
    expect(await exists(state)).toBe(false);
  });

  it('a directory as FILE is exit 2 before any request', async () => {
    const r = await listCommand(ctx.env, ['/v1/items', '-o', ctx.env.configDir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${ctx.env.configDir} is a directory`);
    expect(r.requests).toEqual([]);
  });

  it('--restart without -o FILE, and --count with it, are usage errors', async () => {
    const a = await listCommand(ctx.env, ['/v1/items', '--restart']);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('--restart applies to -o FILE only');
    const b = await listCommand(ctx.env, ['/v1/items', '--count', '-o', ctx.out]);
    expect(b.code).toBe(2);
    expect(await exists(ctx.out)).toBe(false);
  });

  it('a FILE shorter than its state is exit 2 naming --restart', async () => {
    failFrom(ctx.emu, 3);
    expect((await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out])).code).toBe(4);
    ctx.emu.clearFaults();
    await truncate(ctx.out, 100);
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is shorter \(100 bytes\) than its state says \(\d+ bytes\); add --restart to start over/);
    expect(r.requests).toEqual([]);
    const restarted = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out, '--restart']);
    expect(restarted.code).toBe(0);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS));
  });

  it('a FILE replaced since its state was written is not continued', async () => {
    failFrom(ctx.emu, 3);
    expect((await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out])).code).toBe(4);
    ctx.emu.clearFaults();
    await writeFile(ctx.out, 'x'.repeat(100_000));
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('does not end where its state says');
    expect(r.stderr).toContain('--restart');
  });

  it('a deleted FILE with its state left is exit 2 naming --restart', async () => {
    failFrom(ctx.emu, 3);
    expect((await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out])).code).toBe(4);
    ctx.emu.clearFaults();
    await rm(ctx.out);
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${ctx.out} is gone, but its state says it holds 200 items; add --restart to start over`,
    );
  });

  it('a state that cannot be read is exit 2 naming --restart', async () => {
    failFrom(ctx.emu, 3);
    expect((await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out])).code).toBe(4);
    ctx.emu.clearFaults();
    const good = await readFile(state, 'utf8');
    const bad: Array<[string, RegExp]> = [
      ['{"format":', /not valid JSON/],
      ['{"hello":1}', /not an idcli state/],
      [good.replace('"items":200', '"items":"200"'), /a field is missing or has the wrong type/],
      [good.replace(/"next":"[^"]+"/, '"next":"https://elsewhere.example/v1/items?pageIndex=2"'), /another origin/],
    ];
    for (const [text, said] of bad) {
      await writeFile(state, text);
      const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
      expect(r.code, text).toBe(2);
      expect(r.stderr).toMatch(said);
      expect(r.stderr).toContain('add --restart to start over');
      expect(r.requests).toEqual([]);
    }
    // Not a file at all: a symbolic link (never followed), a directory.
    await rm(state);
    await symlink(join(ctx.env.configDir, 'elsewhere'), state);
    const link = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
    expect(link.code).toBe(2);
    expect(link.stderr).toContain('it is a symbolic link');
    await rm(state);
    await mkdir(state);
    const dir = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
    expect(dir.code).toBe(2);
    expect(dir.stderr).toContain('(it is not a regular file); add --restart to start over');
    await rmdir(state);
    // With the state mended, --restart still starts over.
    await writeFile(state, good);
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out, '--restart']);
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS));
  });

  it('a cursor the server no longer accepts: exit 4 as today, the message names --restart', async () => {
    const events = plainItems(250, 'e');
    ctx.emu.setCollection('/v1/events', { type: 'cursor', items: events });
    failFrom(ctx.emu, 3, '/v1/events');
    expect((await listCommand(ctx.env, ['/v1/events', '-o', ctx.out])).code).toBe(4);
    ctx.emu.clearFaults();
    // The cursor has expired: the service refuses the very URL the state holds.
    ctx.emu.inject({ path: '/v1/events', fault: { kind: 'status', status: 410 } });
    const r = await listCommand(ctx.env, ['/v1/events', '-o', ctx.out]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(
      /HTTP 410 Gone; if the service no longer accepts where the last run stopped, add --restart/,
    );
    const restarted = await listCommand(ctx.env, ['/v1/events', '-o', ctx.out, '--restart']);
    expect(restarted.code, restarted.stderr).toBe(0);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(events));
  });
});

const run = promisify(execFile);
const chattr = (args: string[]) => run('chattr', args);

describe('idcli list -o FILE where FILE cannot be', () => {
  it('a file in the way above FILE: exit 2 naming it, before any request', async () => {
    const blocker = join(ctx.env.configDir, 'blocker');
    await writeFile(blocker, '');
    const file = join(blocker, 'items.ndjson');
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', file]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(
      `error: cannot create ${file}: ${blocker} is a file, not a directory (ENOTDIR); remove or rename ${blocker}\n`,
    );
    expect(r.requests).toEqual([]);
    expect(await readFile(blocker, 'utf8')).toBe('');
  });
});

// Immutable (chattr +i): even root may not change it (EPERM), as a directory of another user stops anyone else.
describe.runIf(process.getuid?.() === 0)('idcli list -o FILE where FILE may not be written', () => {
  it('a directory that may not be written: exit 2 with the path, the reason and the fix', async () => {
    const sealed = join(ctx.env.configDir, 'sealed');
    await mkdir(sealed);
    await chattr(['+i', sealed]);
    try {
      const file = join(sealed, 'items.ndjson');
      const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', file]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `error: cannot create ${file}: operation not permitted (EPERM); make ${sealed} writable for you (chmod u+rwx '${sealed}')\n`,
      );
      expect(await exists(`${file}.idcli-state`)).toBe(false);
    } finally {
      await chattr(['-i', sealed]);
    }
  });

  it('a FILE to continue that may not be written: exit 2 with the fix or --restart, FILE and its state kept', async () => {
    failFrom(ctx.emu, 3);
    expect((await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out])).code).toBe(4);
    const before = await readFile(ctx.out, 'utf8');
    ctx.emu.clearFaults();
    await chattr(['+i', ctx.out]);
    try {
      const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toBe(
        `error: cannot open ${ctx.out}: operation not permitted (EPERM); make ${ctx.out} writable for you (chmod u+rw '${ctx.out}'), or add --restart to start over\n`,
      );
      expect(r.requests).toEqual([]);
    } finally {
      await chattr(['-i', ctx.out]);
    }
    expect(await readFile(ctx.out, 'utf8')).toBe(before);
    expect(await readState()).toMatchObject({ items: 200 });
  });
});

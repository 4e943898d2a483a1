/**
 * `idcli list -o FILE` writes only to files of the user's own (docs/cli.md, "Private files"): links and files that
 * another user (`nobody`, really running `ln`, `touch` and `mkdir` through setpriv) put in a shared sticky directory,
 * a second name, names that leave no room for the state, and what the state says. Against the emulator, in this
 * process (runCommand), with the kernel's own protected_* settings as they are (off here; where on, the kernel refuses
 * first and the same assertions hold). FIFOs, -o /dev/stdout, one writer per FILE and a relative FILE run as another
 * user need a process: test/e2e/list-dump-trust.test.ts.
 */
import { execFile } from 'node:child_process';
import { chmod, link, lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { exists } from '../../support/dump-claim.js';
import { eachDump, listCommand, ndjson, plainItems, seq, failFrom } from '../../support/list.js';

const run = promisify(execFile);
const ROOT_USER = process.getuid?.() === 0;
const NOBODY = 65534;

const ITEMS = plainItems(250);

const ctx = eachDump(ITEMS);

/** Runs a command as the user nobody, as that user would. */
async function asNobody(cmd: string, ...args: string[]): Promise<void> {
  await run('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', cmd, ...args]);
}

/** A shared directory like /tmp: anyone may create in it, only an entry's owner may remove it. */
async function sharedDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'idcli-shared-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  await chmod(dir, 0o1777);
  return dir;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe.runIf(ROOT_USER)('idcli list -o FILE meets what another user put there', () => {
  it("nobody's link in a sticky shared directory to the victim's file: exit 2, nothing written, no request", async () => {
    const shared = await sharedDir();
    const victim = join(ctx.env.configDir, 'bashrc');
    await writeFile(victim, 'keep me\n');
    const planted = join(shared, 'users.ndjson');
    await asNobody('ln', '-s', victim, planted);
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', planted]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(
      `error: refusing to follow the symbolic link ${planted}: it belongs to another user (uid ${NOBODY}); remove the link, or name a file of your own for -o, in a directory only you may write\n`,
    );
    expect(r.requests).toEqual([]);
    expect(await readFile(victim, 'utf8')).toBe('keep me\n');
    expect(await exists(`${victim}.idcli-state`)).toBe(false);
    expect(await exists(`${planted}.idcli-state`)).toBe(false);
  });

  it("nobody's FILE made beforehand, mode 0666: refused naming its owner, left as it was", async () => {
    const shared = await sharedDir();
    const file = join(shared, 'dump.ndjson');
    await asNobody('sh', '-c', `umask 0; printf 'nobody\\n' > '${file}'`);
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', file]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(`^error: refusing to use ${file}: it belongs to another user \\(uid ${NOBODY}\\), not to you`),
    );
    expect(r.requests).toEqual([]);
    expect(await readFile(file, 'utf8')).toBe('nobody\n');
    const st = await stat(file);
    expect([st.uid, st.mode & 0o777]).toEqual([NOBODY, 0o666]);
  });

  it('FILE in a directory that nobody owns: refused, as nobody could swap it between runs', async () => {
    const dir = join(await sharedDir(), 'nobodys');
    await asNobody('mkdir', '-m', '0777', dir);
    const file = join(dir, 'out.ndjson');
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', file]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`refusing to use ${file}: it is in ${dir}, and it belongs to uid ${NOBODY}`);
    expect(r.requests).toEqual([]);
    expect(await exists(file)).toBe(false);
  });

  it.each([1, 2, 3])(
    'FILE under a directory of nobody %i levels above its own: exit 2 naming it and its owner, nothing written',
    async (level) => {
      // nobody may rename entries in its directory: it could swap the one below for a link between check and open.
      const levels = ['a', 'b', 'c'].map((_, i) => join(ctx.env.configDir, 'up', ...['a', 'b', 'c'].slice(0, i + 1)));
      await mkdir(levels[2]!, { recursive: true });
      const foreign = levels[3 - level]!;
      await run('chown', [`${NOBODY}:${NOBODY}`, foreign]);
      const file = join(levels[2]!, 'out.ndjson');
      const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', file]);
      expect(r.code, r.stderr).toBe(2);
      const where = level === 1 ? `it is in ${foreign}` : `${foreign} is on the way to it`;
      expect(r.stderr).toBe(
        `error: refusing to use ${file}: ${where}, and it belongs to uid ${NOBODY}; name a file of your own for -o, in a directory only you may write\n`,
      );
      expect(r.requests).toEqual([]);
      expect(await exists(file)).toBe(false);
      expect(await exists(`${file}.idcli-state`)).toBe(false);
    },
  );

  it("FILE reached through nobody's link above its directory, in a sticky shared directory: refused", async () => {
    const shared = await sharedDir();
    await mkdir(join(ctx.env.configDir, 'dumps'));
    const planted = join(shared, 'dumps');
    await asNobody('ln', '-s', join(ctx.env.configDir, 'dumps'), planted);
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', join(planted, 'out.ndjson')]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      `refusing to follow the symbolic link ${planted}: it belongs to another user (uid ${NOBODY})`,
    );
    expect(r.requests).toEqual([]);
  });

  it("FILE under a directory of the user's own in a sticky shared directory is written", async () => {
    const shared = await sharedDir();
    await mkdir(join(shared, 'mine', 'dumps'), { recursive: true, mode: 0o700 });
    const file = join(shared, 'mine', 'dumps', 'out.ndjson');
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(ndjson(ITEMS));
  });

  it("the state's temp file planted by nobody is cleared; its state as a directory is exit 2 naming it, --restart too", async () => {
    const shared = await sharedDir();
    const file = join(shared, 'out.ndjson');
    await writeFile(file, 'mine\n');
    await asNobody('touch', `${file}.idcli-state.tmp`);
    const cleared = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', file]);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(ndjson(ITEMS));
    expect(await exists(`${file}.idcli-state.tmp`)).toBe(false);

    await writeFile(file, 'mine\n');
    await asNobody('mkdir', `${file}.idcli-state`);
    for (const extra of [[], ['--restart']]) {
      const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', file, ...extra]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${file}.idcli-state`);
      expect(r.requests).toEqual([]);
      expect(await readFile(file, 'utf8')).toBe('mine\n');
    }
  });
});

describe('idcli list -o FILE: links of the user, and what is not a regular file', () => {
  it("a link of the user's own in their own directory is followed: latest.ndjson -> dumps/today.ndjson", async () => {
    await mkdir(join(ctx.env.configDir, 'dumps'));
    const target = join(ctx.env.configDir, 'dumps', 'today.ndjson');
    const link = join(ctx.env.configDir, 'latest.ndjson');
    await symlink(join('dumps', 'today.ndjson'), link);
    ctx.emu.inject({ path: '/v1/items', nth: 3, fault: { kind: 'status', status: 500 } });
    const first = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', link]);
    expect(first.code).toBe(4);
    // The state lies beside the file the link leads to.
    expect(await exists(`${target}.idcli-state`)).toBe(true);
    const again = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', link]);
    expect(again.code, again.stderr).toBe(0);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await readFile(target, 'utf8')).toBe(ndjson(ITEMS));
    expect((await stat(target)).mode & 0o777).toBe(0o600);
    expect(await exists(`${target}.idcli-state`)).toBe(false);
    expect(await exists(`${target}.idcli-run`)).toBe(false);
  });

  it("-o '' and -o nodir/ are exit 2 saying what is wrong", async () => {
    const empty = await listCommand(ctx.env, ['/v1/items', '-o', '']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe('error: -o needs a file name; name a file for -o, e.g. users.ndjson, or - for stdout\n');
    const slash = await listCommand(ctx.env, ['/v1/items', '-o', `${join(ctx.env.configDir, 'nodir')}/`]);
    expect(slash.code).toBe(2);
    expect(slash.stderr).toContain('ends with /: it names a directory');
    expect(slash.requests).toEqual([]);
  });

  it('a FILE with a second name (a hard link): exit 2 on either name, naming it, FILE untouched, no request', async () => {
    await writeFile(ctx.out, 'keep\n');
    const other = join(ctx.env.configDir, 'other.ndjson');
    await link(ctx.out, other);
    for (const file of [ctx.out, other]) {
      for (const extra of [[], ['--restart']]) {
        const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', file, ...extra]);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toBe(
          `error: refusing to use ${file}: it has 2 names (hard links), and a run on another of them would write it too; remove its other names, or name another file for -o\n`,
        );
        expect(r.requests).toEqual([]);
      }
    }
    expect(await readFile(ctx.out, 'utf8')).toBe('keep\n');
    expect(await exists(`${ctx.out}.idcli-run`)).toBe(false);
  });

  it('a FILE path over PATH_MAX: exit 2 saying so, the path shown by its start and its end, no request', async () => {
    const file = join(ctx.env.configDir, `${'a/'.repeat(2500)}x.ndjson`);
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', file]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^error: cannot create \S+…\S+x\.ndjson: it is too long \(\d+ bytes\) \(ENAMETOOLONG\)/);
    expect(r.stderr).toContain(file.slice(0, 60));
    expect(r.stderr.length).toBeLessThan(300);
    expect(r.requests).toEqual([]);
  });

  it('a FILE name too long for its state beside it: exit 2, FILE untouched, no request', async () => {
    const file = join(ctx.env.configDir, `${'x'.repeat(240)}.ndjson`);
    await writeFile(file, 'keep\n');
    for (const extra of [[], ['--restart']]) {
      const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', file, ...extra]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/is too long for -o: .*; use a name of at most 233 bytes\n$/);
      expect(r.requests).toEqual([]);
      expect(await readFile(file, 'utf8')).toBe('keep\n');
    }
    // The longest name allowed works.
    const longest = join(ctx.env.configDir, `${'y'.repeat(226)}.ndjson`);
    const ok = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', longest]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(await readFile(longest, 'utf8')).toBe(ndjson(ITEMS));
  });
});

describe('idcli list -o FILE: the state tells the truth', () => {
  it('--limit below what FILE holds: exit 2 saying so, FILE and its state kept, no request', async () => {
    failFrom(ctx.emu, 3);
    expect((await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out])).code).toBe(4);
    ctx.emu.clearFaults();
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '--limit', '150', '-o', ctx.out]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(
      `error: ${ctx.out} already holds 200 items, more than --limit 150; run with --limit 200 or more to continue it, or add --restart to start over with --limit 150\n`,
    );
    expect(r.requests).toEqual([]);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS.slice(0, 200)));
    const restart = await listCommand(ctx.env, ['/v1/items', ...seq, '--limit', '150', '-o', ctx.out, '--restart']);
    expect(restart.code, restart.stderr).toBe(0);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS.slice(0, 150)));
  });

  it('a state of 1 GB is refused unread: exit 2 naming its size and --restart, no request', async () => {
    await writeFile(ctx.out, 'x\n');
    await writeFile(`${ctx.out}.idcli-state`, '');
    // Sparse: the size is there, the disk blocks are not.
    await truncate(`${ctx.out}.idcli-state`, 1024 ** 3);
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`its state ${ctx.out}.idcli-state cannot be used (it is larger than 16 MB)`);
    expect(r.stderr).toContain('add --restart to start over');
    expect(r.requests).toEqual([]);
    expect(await readFile(ctx.out, 'utf8')).toBe('x\n');
  });

  it("exit 5 on a page's link: the stop line counts what FILE holds and says a re-run meets the same answer", async () => {
    ctx.emu.inject({
      path: '/v1/items',
      nth: 3,
      fault: { kind: 'next', href: 'http://other.invalid/v1/items?pageIndex=3' },
    });
    const r = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
    expect(r.code, r.stderr).toBe(5);
    const said = /stopped after (\d+) items in (\S+); running the same command again gets the same answer/.exec(
      r.stderr,
    );
    expect(said?.[2]).toBe(ctx.out);
    const lines = (await readFile(ctx.out, 'utf8')).split('\n').length - 1;
    expect(Number(said?.[1])).toBe(lines);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS.slice(0, lines)));
  });
});

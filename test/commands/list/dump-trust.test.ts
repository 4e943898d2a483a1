// A process for some: a FIFO must not hang the run, -o /dev/stdout is the process's own stdout, one writer per FILE
// is told by pid across runs killed and racing, and a relative FILE is the process's cwd, as another user.
/**
 * `idcli list -o FILE` writes only to files of the user's own (docs/cli.md, "Private files"): links and files that
 * another user (`nobody`, really running `ln`, `touch` and `mkdir` through setpriv) put in a shared sticky directory,
 * FIFOs and devices, names that leave no room for the state, and one writer per FILE. Against the emulator, in this
 * process (runCommand) where no process is the point, with the kernel's own protected_* settings as they are (off
 * here; where on, the kernel refuses first and the same assertions hold).
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { constants } from 'node:fs';
import {
  chmod,
  link,
  lstat,
  mkdir,
  mkdtemp,
  open,
  readFile,
  rm,
  stat,
  symlink,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../../emulator/index.js';
import { runCli } from '../../support/cli.js';
import {
  cliEnv,
  eachTest,
  list,
  listCommand,
  type ListEnv,
  ndjson,
  plainItems,
  signalAtThirdPage,
} from '../../support/list.js';

const run = promisify(execFile);
const ROOT_USER = process.getuid?.() === 0;
const NOBODY = 65534;

let emu: Emulator;
let env: ListEnv & { cleanup: () => Promise<void> };
const ITEMS = plainItems(250);
let out: string;

eachTest(ITEMS, (e, v) => {
  emu = e;
  env = v;
});
beforeEach(() => {
  out = join(env.configDir, 'items.ndjson');
});

const seq = ['--concurrency', '1'];
const exists = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  );

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
    const victim = join(env.configDir, 'bashrc');
    await writeFile(victim, 'keep me\n');
    const planted = join(shared, 'users.ndjson');
    await asNobody('ln', '-s', victim, planted);
    const r = await listCommand(env, ['/v1/items', ...seq, '-o', planted]);
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
    const r = await listCommand(env, ['/v1/items', ...seq, '-o', file]);
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
    const r = await listCommand(env, ['/v1/items', ...seq, '-o', file]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`refusing to use ${file}: it is in ${dir}, and it belongs to uid ${NOBODY}`);
    expect(r.requests).toEqual([]);
    expect(await exists(file)).toBe(false);
  });

  it.each([1, 2, 3])(
    'FILE under a directory of nobody %i levels above its own: exit 2 naming it and its owner, nothing written',
    async (level) => {
      // nobody may rename entries in its directory: it could swap the one below for a link between check and open.
      const levels = ['a', 'b', 'c'].map((_, i) => join(env.configDir, 'up', ...['a', 'b', 'c'].slice(0, i + 1)));
      await mkdir(levels[2]!, { recursive: true });
      const foreign = levels[3 - level]!;
      await run('chown', [`${NOBODY}:${NOBODY}`, foreign]);
      const file = join(levels[2]!, 'out.ndjson');
      const r = await listCommand(env, ['/v1/items', ...seq, '-o', file]);
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
    await mkdir(join(env.configDir, 'dumps'));
    const planted = join(shared, 'dumps');
    await asNobody('ln', '-s', join(env.configDir, 'dumps'), planted);
    const r = await listCommand(env, ['/v1/items', ...seq, '-o', join(planted, 'out.ndjson')]);
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
    const r = await listCommand(env, ['/v1/items', ...seq, '-o', file]);
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(ndjson(ITEMS));
  });

  it("the state's temp file planted by nobody is cleared; its state as a directory is exit 2 naming it, --restart too", async () => {
    const shared = await sharedDir();
    const file = join(shared, 'out.ndjson');
    await writeFile(file, 'mine\n');
    await asNobody('touch', `${file}.idcli-state.tmp`);
    const cleared = await listCommand(env, ['/v1/items', ...seq, '-o', file]);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(ndjson(ITEMS));
    expect(await exists(`${file}.idcli-state.tmp`)).toBe(false);

    await writeFile(file, 'mine\n');
    await asNobody('mkdir', `${file}.idcli-state`);
    for (const extra of [[], ['--restart']]) {
      const r = await listCommand(env, ['/v1/items', ...seq, '-o', file, ...extra]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${file}.idcli-state`);
      expect(r.requests).toEqual([]);
      expect(await readFile(file, 'utf8')).toBe('mine\n');
    }
  });
});

describe('idcli list -o FILE: links of the user, and what is not a regular file', () => {
  it("a link of the user's own in their own directory is followed: latest.ndjson -> dumps/today.ndjson", async () => {
    await mkdir(join(env.configDir, 'dumps'));
    const target = join(env.configDir, 'dumps', 'today.ndjson');
    const link = join(env.configDir, 'latest.ndjson');
    await symlink(join('dumps', 'today.ndjson'), link);
    emu.inject({ path: '/v1/items', nth: 3, fault: { kind: 'status', status: 500 } });
    const first = await listCommand(env, ['/v1/items', ...seq, '-o', link]);
    expect(first.code).toBe(4);
    // The state lies beside the file the link leads to.
    expect(await exists(`${target}.idcli-state`)).toBe(true);
    const again = await listCommand(env, ['/v1/items', ...seq, '-o', link]);
    expect(again.code, again.stderr).toBe(0);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await readFile(target, 'utf8')).toBe(ndjson(ITEMS));
    expect((await stat(target)).mode & 0o777).toBe(0o600);
    expect(await exists(`${target}.idcli-state`)).toBe(false);
    expect(await exists(`${target}.idcli-run`)).toBe(false);
  });

  it('a FIFO with no reader: exit 2 before any request, at once', async () => {
    const fifo = join(env.configDir, 'fifo');
    await run('mkfifo', [fifo]);
    const r = await list(env, ['/v1/items', ...seq, '-o', fifo], { timeoutMs: 10_000 });
    expect(r.signal).toBeNull();
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`refusing to use ${fifo}: it is not a regular file`);
    expect(r.requests).toEqual([]);
  });

  it('a FIFO with a reader that never reads, and a link to it: exit 2 before any request', async () => {
    const fifo = join(env.configDir, 'fifo');
    await run('mkfifo', [fifo]);
    const reader = await open(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const link = join(env.configDir, 'to-fifo');
      await symlink(fifo, link);
      for (const file of [fifo, link]) {
        const r = await list(env, ['/v1/items', ...seq, '-o', file], { timeoutMs: 10_000 });
        expect(r.signal).toBeNull();
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain('it is not a regular file');
        expect(r.requests).toEqual([]);
      }
    } finally {
      await reader.close();
    }
  });

  it('-o /dev/stdout on a pipe is refused as not a regular file, and leaves nothing in /dev', async () => {
    const r = await list(env, ['/v1/items', ...seq, '-o', '/dev/stdout']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('it is not a regular file');
    expect(r.requests).toEqual([]);
    expect(await exists('/dev/stdout.idcli-state')).toBe(false);
  });

  it('-o /dev/stdout on a regular file writes that file, with its state beside it and none in /dev', async () => {
    const fh = await open(out, 'w');
    let r;
    try {
      r = await list(env, ['/v1/items', ...seq, '-o', '/dev/stdout'], { stdout: fh.fd });
    } finally {
      await fh.close();
    }
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(out, 'utf8')).toBe(ndjson(ITEMS));
    expect(await exists('/dev/stdout.idcli-state')).toBe(false);
    expect(await exists('/dev/stdout.idcli-run')).toBe(false);
    expect(await exists(`${out}.idcli-state`)).toBe(false);
  });

  it("-o '' and -o nodir/ are exit 2 saying what is wrong", async () => {
    const empty = await listCommand(env, ['/v1/items', '-o', '']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe('error: -o needs a file name; name a file for -o, e.g. users.ndjson, or - for stdout\n');
    const slash = await listCommand(env, ['/v1/items', '-o', `${join(env.configDir, 'nodir')}/`]);
    expect(slash.code).toBe(2);
    expect(slash.stderr).toContain('ends with /: it names a directory');
    expect(slash.requests).toEqual([]);
  });

  it('a FILE with a second name (a hard link): exit 2 on either name, naming it, FILE untouched, no request', async () => {
    await writeFile(out, 'keep\n');
    const other = join(env.configDir, 'other.ndjson');
    await link(out, other);
    for (const file of [out, other]) {
      for (const extra of [[], ['--restart']]) {
        const r = await listCommand(env, ['/v1/items', ...seq, '-o', file, ...extra]);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toBe(
          `error: refusing to use ${file}: it has 2 names (hard links), and a run on another of them would write it too; remove its other names, or name another file for -o\n`,
        );
        expect(r.requests).toEqual([]);
      }
    }
    expect(await readFile(out, 'utf8')).toBe('keep\n');
    expect(await exists(`${out}.idcli-run`)).toBe(false);
  });

  it('a FILE path over PATH_MAX: exit 2 saying so, the path shown by its start and its end, no request', async () => {
    const file = join(env.configDir, `${'a/'.repeat(2500)}x.ndjson`);
    const r = await listCommand(env, ['/v1/items', ...seq, '-o', file]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^error: cannot create \S+…\S+x\.ndjson: it is too long \(\d+ bytes\) \(ENAMETOOLONG\)/);
    expect(r.stderr).toContain(file.slice(0, 60));
    expect(r.stderr.length).toBeLessThan(300);
    expect(r.requests).toEqual([]);
  });

  it('a FILE name too long for its state beside it: exit 2, FILE untouched, no request', async () => {
    const file = join(env.configDir, `${'x'.repeat(240)}.ndjson`);
    await writeFile(file, 'keep\n');
    for (const extra of [[], ['--restart']]) {
      const r = await listCommand(env, ['/v1/items', ...seq, '-o', file, ...extra]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/is too long for -o: .*; use a name of at most 233 bytes\n$/);
      expect(r.requests).toEqual([]);
      expect(await readFile(file, 'utf8')).toBe('keep\n');
    }
    // The longest name allowed works.
    const longest = join(env.configDir, `${'y'.repeat(226)}.ndjson`);
    const ok = await listCommand(env, ['/v1/items', ...seq, '-o', longest]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(await readFile(longest, 'utf8')).toBe(ndjson(ITEMS));
  });
});

describe('idcli list -o FILE has one writer', () => {
  it('a second run while the first writes is exit 2 at once naming its pid; the first then continues', async () => {
    emu.inject({ path: '/v1/items', nth: 3, fault: { kind: 'latency', ms: 20_000 } });
    let first: ChildProcess | undefined;
    let seen = 0;
    // The second run starts as the first one's third request arrives (held there); the first is stopped after.
    const second = new Promise<Awaited<ReturnType<typeof list>>>((resolve) => {
      emu.onRequest((q) => {
        if (q.path !== '/v1/items' || ++seen !== 3) return;
        emu.onRequest(undefined);
        void list(env, ['/v1/items', ...seq, '-o', out]).then((r) => {
          first?.kill('SIGTERM');
          resolve(r);
        });
      });
    });
    const firstRun = list(env, ['/v1/items', ...seq, '-o', out], {
      onSpawn: (c) => {
        first = c;
      },
    });
    const r = await second;
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${out} is being written by another idcli run (pid ${first?.pid})`);
    expect(r.requests).toEqual([]);
    const f = await firstRun;
    expect(f.code, f.stderr).toBe(143);
    expect(await exists(`${out}.idcli-run`)).toBe(false);
    emu.clearFaults();
    const again = await listCommand(env, ['/v1/items', ...seq, '-o', out]);
    expect(again.code, again.stderr).toBe(0);
    expect(await readFile(out, 'utf8')).toBe(ndjson(ITEMS));
  }, 60_000);

  it('the claim of a run killed with SIGKILL is taken over, and the walk continues byte-identical', async () => {
    const first = await list(env, ['/v1/items', ...seq, '-o', out], signalAtThirdPage(emu, 'SIGKILL'));
    expect(first.signal).toBe('SIGKILL');
    expect(await exists(`${out}.idcli-run`)).toBe(true);
    emu.clearFaults();
    const again = await listCommand(env, ['/v1/items', ...seq, '-o', out]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/resuming \S+ after [12]00 items/);
    expect(await readFile(out, 'utf8')).toBe(ndjson(ITEMS));
    expect(await exists(`${out}.idcli-run`)).toBe(false);
  }, 60_000);

  it('three runs started at once on the claim of a killed run: one takes it over, the others are exit 2', async () => {
    const first = await list(env, ['/v1/items', ...seq, '-o', out], signalAtThirdPage(emu, 'SIGKILL'));
    expect(first.signal).toBe('SIGKILL');
    emu.clearFaults();
    // Whichever run wins holds its first request until the others have ended.
    emu.inject({ path: '/v1/items', times: Number.POSITIVE_INFINITY, fault: { kind: 'latency', ms: 20_000 } });
    const children: ChildProcess[] = [];
    let ended = 0;
    const runs = [0, 1, 2].map(() =>
      list(env, ['/v1/items', ...seq, '-o', out], { onSpawn: (c) => children.push(c) }).then((r) => {
        if (r.code === 2) ended += 1;
        if (ended === 2) for (const c of children) c.kill('SIGTERM');
        return r;
      }),
    );
    const results = await Promise.all(runs);
    const codes = results.map((r) => r.code).sort();
    expect(codes, results.map((r) => r.stderr).join('')).toEqual([143, 2, 2]);
    for (const r of results.filter((x) => x.code === 2))
      expect(r.stderr).toMatch(/is being (written|claimed) by another idcli run/);
    emu.clearFaults();
    const again = await listCommand(env, ['/v1/items', ...seq, '-o', out]);
    expect(again.code, again.stderr).toBe(0);
    expect(await readFile(out, 'utf8')).toBe(ndjson(ITEMS));
  }, 90_000);
});

describe('idcli list -o FILE: the state tells the truth', () => {
  it('--limit below what FILE holds: exit 2 saying so, FILE and its state kept, no request', async () => {
    emu.inject({ path: '/v1/items', nth: 3, times: Number.POSITIVE_INFINITY, fault: { kind: 'status', status: 500 } });
    expect((await listCommand(env, ['/v1/items', ...seq, '-o', out])).code).toBe(4);
    emu.clearFaults();
    const r = await listCommand(env, ['/v1/items', ...seq, '--limit', '150', '-o', out]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(
      `error: ${out} already holds 200 items, more than --limit 150; run with --limit 200 or more to continue it, or add --restart to start over with --limit 150\n`,
    );
    expect(r.requests).toEqual([]);
    expect(await readFile(out, 'utf8')).toBe(ndjson(ITEMS.slice(0, 200)));
    const restart = await listCommand(env, ['/v1/items', ...seq, '--limit', '150', '-o', out, '--restart']);
    expect(restart.code, restart.stderr).toBe(0);
    expect(await readFile(out, 'utf8')).toBe(ndjson(ITEMS.slice(0, 150)));
  });

  it('a state of 1 GB is refused unread: exit 2 naming its size and --restart, no request', async () => {
    await writeFile(out, 'x\n');
    await writeFile(`${out}.idcli-state`, '');
    // Sparse: the size is there, the disk blocks are not.
    await truncate(`${out}.idcli-state`, 1024 ** 3);
    const r = await listCommand(env, ['/v1/items', ...seq, '-o', out]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`its state ${out}.idcli-state cannot be used (it is larger than 16 MB)`);
    expect(r.stderr).toContain('add --restart to start over');
    expect(r.requests).toEqual([]);
    expect(await readFile(out, 'utf8')).toBe('x\n');
  });

  it("exit 5 on a page's link: the stop line counts what FILE holds and says a re-run meets the same answer", async () => {
    emu.inject({
      path: '/v1/items',
      nth: 3,
      fault: { kind: 'next', href: 'http://other.invalid/v1/items?pageIndex=3' },
    });
    const r = await listCommand(env, ['/v1/items', ...seq, '-o', out]);
    expect(r.code, r.stderr).toBe(5);
    const said = /stopped after (\d+) items in (\S+); running the same command again gets the same answer/.exec(
      r.stderr,
    );
    expect(said?.[2]).toBe(out);
    const lines = (await readFile(out, 'utf8')).split('\n').length - 1;
    expect(Number(said?.[1])).toBe(lines);
    expect(await readFile(out, 'utf8')).toBe(ndjson(ITEMS.slice(0, lines)));
  });

  it('a directory where the state cannot be made, named relatively: the fix names the directory', async () => {
    const sealed = join(env.configDir, 'sealed');
    await mkdir(sealed);
    await chmod(sealed, 0o555);
    // Root passes mode bits; nobody does not. The test's directory must let nobody in.
    await chmod(env.configDir, 0o755);
    const asOther = ROOT_USER ? { uid: NOBODY, gid: NOBODY } : {};
    const r = await runCli(['list', '/v1/items', ...seq, '-o', 'ro.ndjson'], {
      env: cliEnv(env, { IDCLI_CONFIG_DIR: join(sealed, 'config') }),
      cwd: sealed,
      ...asOther,
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(
      `error: cannot create ro.ndjson: permission denied (EACCES); make ${sealed} writable for you (chmod u+rwx '${sealed}')\n`,
    );
  });
});

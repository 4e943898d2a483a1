/**
 * Needs a process: the lock's holder is a real process stopped (SIGSTOP) and continued.
 * `config set` and the lock it holds while it changes config.json (docs/cli.md, "config"): a run paused while it
 * holds the lock keeps it, a run whose lock was taken anyway writes nothing, a waiter says what it waits for, and no
 * run writes a file that later runs would refuse to read. The holders are real processes, stopped and continued;
 * the other runs are in process. The lock is made to look old by setting its mtime back, and the waiting run is seen
 * to look at it again through the file's access time, rather than waiting for the staleness age to pass.
 */
import type { ChildProcess } from 'node:child_process';
import { watch } from 'node:fs';
import { mkdir, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configLockPath } from '../../src/store/lock.js';
import { baseEnv, followInProcess, followProcess, type FollowedRun, runCli, tempDir } from '../support/cli.js';
import { runCommand } from '../support/run-command.js';
import { until } from '../support/until.js';
import { deadPid } from '../support/store.js';
import { ageWhileWatched } from '../support/lock-age.js';

/** How long a lock file may go untouched before the lock judges it abandoned, when its owner cannot be checked. */
const STALE_MS = 10_000;

type Run = FollowedRun & { child: ChildProcess };

let dir: { path: string; cleanup: () => Promise<void> };
let lockPath: string;
let env: Record<string, string | undefined>;
const stopped = new Set<ChildProcess>();

beforeEach(async () => {
  dir = await tempDir('idcli-config-lock-');
  lockPath = configLockPath(dir.path);
  env = baseEnv({ IDCLI_CONFIG_DIR: dir.path, IDCLI_CREDENTIAL_STORE: 'file' });
});
afterEach(async () => {
  for (const child of stopped) child.kill('SIGCONT');
  stopped.clear();
  await dir.cleanup();
});

function start(args: string[], opts: { prefix?: string[] } = {}): Promise<Run> {
  return followProcess((onSpawn) => runCli(args, { env, timeoutMs: 120_000, onSpawn, ...opts }));
}

/** Runs `idcli <args>` in this process, and follows its stderr as it arrives. */
function startInProcess(args: string[]): FollowedRun {
  return followInProcess((onStderr) => runCommand(args, { env, onStderr }));
}

const lockOwner = async (): Promise<number | undefined> =>
  readFile(lockPath, 'utf8').then(
    (text) => (JSON.parse(text) as { pid: number }).pid,
    () => undefined,
  );

/** config.json as it is now ('' when there is none). */
const configText = (): Promise<string> => readFile(join(dir.path, 'config.json'), 'utf8').catch(() => '');

/**
 * Whether a stopped `config set` has not yet begun to write: no temp file beside config.json, which is still
 * `before`. Its last look at the lock comes after the temp file is written, so a run stopped earlier has it ahead.
 */
async function notWrittenYet(before: string): Promise<boolean> {
  if ((await readdir(dir.path)).some((n) => n.endsWith('.tmp'))) return false;
  return (await configText()) === before;
}

/**
 * Runs `config set <key> <value>` and stops it (SIGSTOP) the moment its lock file appears; a run that got through,
 * or had begun to write, before the stop landed is let go and another is started, until one is stopped holding the
 * lock with its write still ahead: a run stopped between its last look at the lock and the rename would commit
 * anyway, and nothing outside it can tell that moment from an earlier one.
 */
async function stopWhileHolding(key: string, value: string): Promise<Run> {
  await mkdir(dirname(lockPath), { recursive: true, mode: 0o700 });
  for (let attempt = 1; ; attempt++) {
    const before = await configText();
    let run: Run | undefined;
    const watcher = watch(dirname(lockPath), (_event, name) => {
      if (name === 'config.lock') run?.child.kill('SIGSTOP');
    });
    try {
      // Niced, so that the test gets to stop it before it is through.
      run = await start(['config', 'set', key, value], { prefix: ['nice', '-n', '19'] });
      const child = run.child;
      // Stopped, or through: a stopped child shows state T in /proc.
      await until(
        async () =>
          run!.exited() || /\) T /.test(await readFile(`/proc/${child.pid}/stat`, 'utf8').catch(() => ''))
            ? true
            : undefined,
        30_000,
        'the run to stop or end',
      );
    } finally {
      watcher.close();
    }
    if (!run.exited() && (await lockOwner()) === run.child.pid && (await notWrittenYet(before))) {
      stopped.add(run.child);
      return run;
    }
    run.child.kill('SIGCONT');
    expect((await run.done).code).toBe(0);
    // The change of a run let go is undone, so that the test starts from the same file with the run it keeps.
    if (before === '') await rm(join(dir.path, 'config.json'), { force: true });
    else await writeFile(join(dir.path, 'config.json'), before);
    if (attempt >= 40) throw new Error('never caught a config set holding its lock');
  }
}

function resume(run: Run): void {
  run.child.kill('SIGCONT');
  stopped.delete(run.child);
}

const configFile = async () => JSON.parse(await readFile(join(dir.path, 'config.json'), 'utf8')) as unknown;

describe('config set and its lock', () => {
  it('a run paused holding the lock keeps it, whatever its age; the next waits, and both changes land', async () => {
    const first = await stopWhileHolding('scope', 'read:users');
    const second = startInProcess(['config', 'set', 'ui-locales', 'de']);
    await until(() => (second.said().includes('waiting for') ? true : undefined), 30_000, 'the wait');
    expect(second.said()).toContain(`waiting for another idcli (pid ${first.child.pid} on `);
    expect(second.said()).toContain(lockPath);
    await ageWhileWatched(lockPath, dir.path, STALE_MS);
    expect(second.exited(), second.said()).toBe(false);
    expect(await lockOwner()).toBe(first.child.pid);
    resume(first);
    const [a, b] = await Promise.all([first.done, second.done]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(await configFile()).toEqual({ profiles: { default: { scope: 'read:users', 'ui-locales': 'de' } } });
    expect(await readdir(dirname(lockPath))).toEqual([]);
  }, 120_000);

  it('a run whose lock was taken while it was paused writes nothing and exits 2, saying why', async () => {
    const first = await stopWhileHolding('scope', 'read:users');
    // The lock deleted by hand, as a stuck lock once was: another run takes it and changes the file.
    await rm(lockPath);
    const second = await runCommand(['config', 'set', 'ui-locales', 'de'], { env });
    expect(second.code, second.stderr).toBe(0);
    resume(first);
    const a = await first.done;
    expect(a.code, a.stderr).toBe(2);
    expect(a.stderr).toBe(
      `error: another process took the lock ${lockPath} while this run held it, so config.json was left as that run made it, without this change; run the command again\n`,
    );
    expect(await configFile()).toEqual({ profiles: { default: { 'ui-locales': 'de' } } });
    expect((await readdir(dir.path)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  }, 120_000);

  it('says on stderr that it waits, naming the lock, when a lock it cannot read the owner of is in the way', async () => {
    await mkdir(dirname(lockPath), { recursive: true, mode: 0o700 });
    await writeFile(lockPath, 'not a lock of idcli');
    const run = startInProcess(['config', 'set', 'scope', 'read:users']);
    await until(() => (run.said().includes('waiting') ? true : undefined), 30_000, 'the wait to be told');
    expect(run.said()).toBe(`waiting for another process to finish with ${lockPath}\n`);
    await rm(lockPath);
    const r = await run.done;
    expect(r.code, r.stderr).toBe(0);
    expect(await configFile()).toEqual({ profiles: { default: { scope: 'read:users' } } });
  }, 60_000);

  it('removes the temp file a holder killed mid-way left in the locks directory', async () => {
    await mkdir(dirname(lockPath), { recursive: true, mode: 0o700 });
    const leftover = `${lockPath}.${await deadPid()}.0123456789ab.tmp`;
    await writeFile(leftover, '{}');
    const then = new Date(Date.now() - 60_000);
    await utimes(leftover, then, then);
    const r = await runCommand(['config', 'set', 'scope', 'read:users'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(await readdir(dirname(lockPath))).toEqual([]);
  });

  it('a locks directory that is a link is refused with a fix that fits config set', async () => {
    await mkdir(join(dir.path, 'elsewhere'), { mode: 0o700 });
    await symlink(join(dir.path, 'elsewhere'), dirname(lockPath));
    const r = await runCommand(['config', 'set', 'scope', 'read:users'], { env });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(
      `error: refusing to follow the symbolic link ${dirname(lockPath)}; remove the link (idcli makes ${dirname(lockPath)} itself) and run the command again\n`,
    );
  });

  it('refuses to write a config.json larger than it reads: exit 2, the file as it was', async () => {
    // Compact, just under the 1 MB read limit; written back indented, it would be over it.
    const entries: string[] = [];
    for (let size = 0, i = 0; size < 1024 * 1024 - 100; i++) {
      entries.push(`"p${i}":{"base-url":"https://id${i}.example.com"}`);
      size += entries.at(-1)!.length + 1;
    }
    entries.pop();
    const text = `{"profiles":{${entries.join(',')}}}`;
    expect(Buffer.byteLength(text)).toBeLessThan(1024 * 1024);
    const path = join(dir.path, 'config.json');
    await writeFile(path, text, { mode: 0o600 });
    const r = await runCommand(['config', 'set', 'scope', 'read:users'], { env });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(
      `error: not written: ${path} would be larger than 1 MB, more than idcli reads; remove profiles or keys you no longer need (\`idcli config unset\`)\n`,
    );
    expect(await readFile(path, 'utf8')).toBe(text);
    const get = await runCommand(['config', 'get', 'base-url', '--profile', 'p0'], { env });
    expect(get.code, get.stderr).toBe(0);
  });
});

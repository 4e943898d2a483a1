/**
 * Needs a process: the lock's holder is a real process stopped (SIGSTOP) and continued.
 * A refresh paused while it holds the lock (Ctrl-Z, SIGSTOP, a frozen VM). A holder still running on this host keeps
 * the lock however long it is paused, so no other run sends the refresh token it already sent; a holder whose lock
 * was taken anyway (deleted by hand) saves nothing once it resumes, and says the sign-in may need `idcli login`.
 * With each credential store, with real processes stopped and continued; the run that waits meanwhile, and the runs
 * around them, run in process. The lock is made to look old by setting its mtime back, and the waiting run is seen
 * to look at it again through the file's access time, rather than waiting for the staleness age to pass.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { lockPathFor } from '../../src/store/lock.js';
import { processStart } from '../../src/store/pid.js';
import { followInProcess, followProcess, type FollowedRun } from '../support/cli.js';
import { until } from '../support/until.js';
import { describeEachStore, type Harness, harness, refreshGrants, storeLogin, tokenForms } from '../support/harness.js';
import { ageWhileWatched } from '../support/lock-age.js';

/** How long a lock file may go untouched before the lock judges it abandoned, when its owner cannot be checked. */
const STALE_MS = 10_000;

let h: Harness | undefined;
let stopped: ChildProcess | undefined;
afterEach(async () => {
  stopped?.kill('SIGCONT');
  stopped = undefined;
  await h?.close();
  h = undefined;
});

type Run = FollowedRun & { child: ChildProcess };

function start(hh: Harness, args: string[]): Promise<Run> {
  return followProcess((onSpawn) => hh.run(args, {}, { onSpawn, timeoutMs: 120_000 }));
}

/** Runs `idcli <args>` in this process, and follows its stderr as it arrives. */
function waitInProcess(hh: Harness, args: string[]): FollowedRun {
  return followInProcess((onStderr) => hh.command(args, {}, { onStderr }));
}

const tokenRequests = (hh: Harness) => hh.emu.requests.filter((r) => r.path === '/oauth/token').length;

/** Starts `token --refresh` and stops it (SIGSTOP) once its refresh request reached the server: it holds the lock. */
async function stopInFlight(hh: Harness): Promise<Run> {
  const before = tokenRequests(hh);
  // The answer waits a little, so that the run is stopped before it reads it.
  hh.emu.inject({ path: '/oauth/token', fault: { kind: 'latency', ms: 300 } });
  const first = await start(hh, ['token', '--refresh']);
  await until(() => (tokenRequests(hh) > before ? true : undefined), 30_000, 'the refresh request');
  first.child.kill('SIGSTOP');
  stopped = first.child;
  return first;
}

describeEachStore('a refresh paused while it holds the lock', (store) => {
  it('keeps the lock, whatever its age: the next run waits, and no refresh token is sent twice', async () => {
    h = await harness({ store, recordItems: 0 });
    const hh = h;
    await storeLogin(hh);
    const lockPath = lockPathFor(join(hh.dir, 'config'), hh.key());
    const first = await stopInFlight(hh);
    const sentBefore = tokenRequests(hh);
    const second = waitInProcess(hh, ['token', '--refresh', '--verbose']);
    await until(() => (second.said().includes('waiting for another idcli') ? true : undefined), 30_000, 'the wait');
    await ageWhileWatched(lockPath, hh.dir, STALE_MS);
    expect(second.exited(), second.said()).toBe(false);
    expect(tokenRequests(hh)).toBe(sentBefore);
    expect(JSON.parse(await readFile(lockPath, 'utf8')).pid).toBe(first.child.pid);

    first.child.kill('SIGCONT');
    stopped = undefined;
    const [a, b] = await Promise.all([first.done, second.done]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    // The second run started before the first's refresh completed: that refresh is its answer.
    expect(b.stdout).toBe(a.stdout);
    expect(refreshGrants(hh).every((e) => e.ok && !e.reuse)).toBe(true);
    const sent = tokenForms(hh.emu)
      .filter((f) => f.grant_type === 'refresh_token')
      .map((f) => f.refresh_token);
    expect(new Set(sent).size).toBe(sent.length);
    expect((await hh.record())?.accessToken).toBe(a.stdout.trim());
    const after = await hh.command(['token', '--refresh']);
    expect(after.code, after.stderr).toBe(0);
  }, 120_000);

  it('saves nothing once its lock was taken while it was paused, and says the sign-in may need a login', async () => {
    h = await harness({ store, recordItems: 0 });
    const hh = h;
    await storeLogin(hh);
    const lockPath = lockPathFor(join(hh.dir, 'config'), hh.key());
    const before = await hh.record();
    const first = await stopInFlight(hh);
    // Another run takes the lock: its file deleted by hand (as a stuck lock once was) and made again by that run.
    await rm(lockPath);
    await mkdir(dirname(lockPath), { recursive: true });
    const taker = {
      pid: process.pid,
      host: hostname(),
      createdAt: Date.now(),
      token: 'taker',
      start: processStart(process.pid),
    };
    await writeFile(lockPath, JSON.stringify(taker));
    first.child.kill('SIGCONT');
    stopped = undefined;
    const a = await first.done;
    expect(a.code, a.stderr).toBe(3);
    expect(a.stdout).toBe('');
    expect(a.stderr).toMatch(
      /^error: another process took the lock \S+ while this run held it, so the refreshed sign-in was not saved.*`idcli login`/m,
    );
    expect(a.stderr).not.toMatch(/\n\s+at /);
    // What the taker holds is left alone: the record is the one from before, and the lock is still the taker's.
    expect((await hh.record())?.generation).toBe(before?.generation);
    expect(JSON.parse(await readFile(lockPath, 'utf8')).token).toBe('taker');
    await rm(lockPath);
  }, 120_000);
});

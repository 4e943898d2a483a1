import { spawn } from 'node:child_process';
import { lstat, mkdir, readdir, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, usageError } from '../../src/errors.js';
import { configLockPath, type LockOptions, lockPathFor, withLock } from '../../src/store/lock.js';
import { processStart } from '../../src/store/pid.js';
import { deadPid, KEY, runFixture, waitForExit } from '../support/store.js';
import { tempDir } from '../support/cli.js';
import { FakeClock } from '../support/clock.js';
import { until } from '../support/until.js';
import { rejection } from '../support/rejection.js';

/** The delays of a waiter's polls, which back off to 200 ms and are jittered by half either way. */
const isPoll = (ms: number) => ms <= 300;

async function plantLock(path: string, owner: { pid: number; host: string; start?: string }, ageMs = 0): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, JSON.stringify({ ...owner, createdAt: Date.now() - ageMs, token: 'planted' }));
  if (ageMs > 0) {
    const then = new Date(Date.now() - ageMs);
    await utimes(path, then, then);
  }
}

describe('lock', () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let lockPath: string;
  /** The clock of the waits: a test moves it, so a deadline or an age is the lock's rule, not the machine's pace. */
  let clock: FakeClock;

  beforeEach(async () => {
    dir = await tempDir('idcli-lock-');
    lockPath = lockPathFor(dir.path, KEY);
    clock = new FakeClock();
  });
  afterEach(() => dir.cleanup());

  /**
   * withLock with `opts` on a lock that stays someone else's, on `clock` moved on until it ends: the error it ends
   * with, whether the work ran, and how much of the clock's time the wait took.
   */
  async function refused(opts: LockOptions) {
    let ran = false;
    const from = clock.now();
    const work = withLock(
      lockPath,
      async () => {
        ran = true;
      },
      { ...opts, clock },
    );
    const err = await rejection(clock.runUntilSettled(work, 'the wait'));
    return { err, ran, waitedMs: clock.now() - from };
  }

  /** withLock on `clock`, moved on until it ends; with how much of the clock's time it took. */
  async function taken<T>(fn: () => Promise<T>, opts: LockOptions = {}) {
    const from = clock.now();
    const value = await clock.runUntilSettled(withLock(lockPath, fn, { ...opts, clock }), 'the lock');
    return { value, waitedMs: clock.now() - from };
  }

  /** The planted lock is as it was planted: a waiter must not touch a lock it does not own. */
  const stillPlanted = async () => expect(JSON.parse(await readFile(lockPath, 'utf8')).token).toBe('planted');

  it('puts one lock file per account under <configDir>/locks', () => {
    expect(lockPath).toMatch(/[/\\]locks[/\\][0-9a-f]{64}\.lock$/);
    expect(lockPathFor(dir.path, { ...KEY, profile: 'other' })).not.toBe(lockPath);
    expect(lockPathFor(dir.path, KEY)).toBe(lockPath);
  });

  it('holds a file naming pid and host while fn runs, and removes it afterwards', async () => {
    const result = await withLock(lockPath, async () => {
      const owner = JSON.parse(await readFile(lockPath, 'utf8')) as Record<string, unknown>;
      expect(owner.pid).toBe(process.pid);
      expect(owner.host).toBe(hostname());
      expect(typeof owner.createdAt).toBe('number');
      return 42;
    });
    expect(result).toBe(42);
    expect(await readdir(dirname(lockPath))).toEqual([]);
  });

  it('releases the lock when fn throws, and passes the error on', async () => {
    const boom = new Error('boom');
    await expect(withLock(lockPath, () => Promise.reject(boom))).rejects.toBe(boom);
    expect(await readdir(dirname(lockPath))).toEqual([]);
    expect(await withLock(lockPath, async () => 'again', { timeoutMs: 1000 })).toBe('again');
  });

  it('serialises holders within one process', async () => {
    const events: string[] = [];
    const hold = (name: string) =>
      withLock(lockPath, async () => {
        events.push(`${name}+`);
        await new Promise((r) => setTimeout(r, 50));
        events.push(`${name}-`);
      });
    await Promise.all([hold('a'), hold('b'), hold('c')]);
    for (let i = 0; i < events.length; i += 2) expect(events[i]!.slice(0, 1)).toBe(events[i + 1]!.slice(0, 1));
  });

  it('keeps a waiter waiting while the lock changes hands, far past timeoutMs in all', async () => {
    // Three holders in turn, each for 0.6 of timeoutMs: the waiter's wait starts over at each change of hands.
    const timeoutMs = 1000;
    const turnMs = 600;
    const start = processStart(process.pid)!;
    const started = clock.now();
    const holders = ['second', 'third', 'none'];
    await plantLock(lockPath, { pid: process.pid, host: hostname(), start });
    let waits = 0;
    let waitedMs = -1;
    const waiter = withLock(lockPath, async () => void (waitedMs = clock.now() - started), {
      timeoutMs,
      clock,
      onWait: () => waits++,
    });
    waiter.catch(() => {});
    await until(() => (waits > 0 ? true : undefined), 10_000, 'the wait');
    for (const [turn, holder] of holders.entries()) {
      while (clock.now() - started < (turn + 1) * turnMs) await clock.elapseFirst(isPoll, "the waiter's poll");
      // Another live holder (this process, as a run of this host) takes over from the one before; the last lets go.
      if (holder === 'none') await rm(lockPath);
      else
        await writeFile(
          lockPath,
          JSON.stringify({ pid: process.pid, host: hostname(), start, createdAt: 0, token: holder }),
        );
      // The waiter's next look sees it, within the turn.
      await clock.elapseFirst(isPoll, "the waiter's poll");
      await until(() => (clock.pending().some(isPoll) || waitedMs >= 0 ? true : undefined), 10_000, 'the look');
    }
    await clock.runUntilSettled(waiter, 'the waiter');
    expect(waitedMs).toBeGreaterThanOrEqual(holders.length * turnMs);
    expect(waitedMs).toBeGreaterThan(timeoutMs);
    expect(waits).toBe(1);
  });

  it('calls onWait once when it has to wait, and not when the lock is free', async () => {
    let waits = 0;
    await withLock(lockPath, async () => {}, { onWait: () => waits++ });
    expect(waits).toBe(0);
    let release!: () => void;
    let first!: Promise<void>;
    await new Promise<void>((held) => {
      first = withLock(lockPath, () => {
        held();
        return new Promise<void>((r) => (release = r));
      });
    });
    const second = withLock(lockPath, async () => 'second', { onWait: () => waits++, timeoutMs: 10_000 });
    await until(() => (waits > 0 ? waits : undefined), 10_000, 'the wait');
    expect(waits).toBe(1);
    release();
    await first;
    expect(await second).toBe('second');
    expect(waits).toBe(1);
  });

  it('loses no update across 8 processes incrementing one counter, even starting from a stale lock', async () => {
    const counter = join(dir.path, 'counter');
    const marker = join(dir.path, 'inside');
    await writeFile(counter, '0');
    // All eight start by finding an abandoned lock: only one of them may remove it, and only once.
    await plantLock(lockPath, { pid: await deadPid(), host: hostname() });
    const iterations = 15;
    const children = Array.from({ length: 8 }, () =>
      waitForExit(runFixture('lock-counter', [lockPath, counter, marker, String(iterations)])),
    );
    const results = await Promise.all(children);
    for (const r of results) expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(Number(await readFile(counter, 'utf8'))).toBe(8 * iterations);
    expect(await readdir(dirname(lockPath))).toEqual([]);
  }, 180_000);

  it('recovers at once from a lock whose holder pid is dead on this host', async () => {
    await plantLock(lockPath, { pid: await deadPid(), host: hostname() });
    // No time of the wait's clock passes: what this catches is a waiter polling until its deadline.
    expect(await taken(async () => 'mine', { timeoutMs: 10_000 })).toEqual({ value: 'mine', waitedMs: 0 });
  });

  it('recovers from a lock of another host once it is older than staleMs', async () => {
    await plantLock(lockPath, { pid: 1, host: 'some-other-host.invalid' }, 120_000);
    expect(await withLock(lockPath, async () => 'mine', { timeoutMs: 10_000 })).toBe('mine');
  });

  it('holds to a lock whose text names no owner while it is fresh, and takes it once older than staleMs', async () => {
    await mkdir(dirname(lockPath), { recursive: true });
    const dead = await deadPid();
    const pidAsText = JSON.stringify({ pid: String(dead), host: hostname(), createdAt: Date.now(), token: 't' });
    const staleMs = 10_000;
    for (const text of ['not json', 'null', '[]', pidAsText]) {
      await writeFile(lockPath, text);
      // Written at the wait clock's time, so that its age is the clock's to decide.
      const written = new Date(clock.now());
      await utimes(lockPath, written, written);
      const { err, ran } = await refused({ timeoutMs: 200, staleMs });
      expect([ran, err.code, err.message.includes('held by')], text).toEqual([false, 'LOCK_TIMED_OUT', false]);
      expect(await readFile(lockPath, 'utf8'), text).toBe(text);
      clock.advance(written.getTime() + staleMs + 1 - clock.now());
      expect(await taken(async () => 'mine', { timeoutMs: 10_000, staleMs }), text).toEqual({
        value: 'mine',
        waitedMs: 0,
      });
    }
  });

  it('times out on a fresh lock of another host with exit 2 naming the lock path', async () => {
    await plantLock(lockPath, { pid: 1, host: 'some-other-host.invalid' });
    const { err, ran, waitedMs } = await refused({ timeoutMs: 300 });
    expect(ran).toBe(false);
    // Something local is in the way, which the user lets finish or removes: not an internal error (exit 1).
    expect(err.exitCode).toBe(ExitCode.USAGE);
    expect(err.code).toBe('LOCK_TIMED_OUT');
    expect(err.message).toContain(lockPath);
    expect(err.message).toMatch(/after 0\.3 s/);
    expect(err.message).toContain('some-other-host.invalid');
    // Given up at its first look past the deadline: one poll interval at most after it.
    expect(waitedMs).toBeGreaterThanOrEqual(300);
    expect(waitedMs).toBeLessThan(300 + 300);
    await stillPlanted();
  });

  it('does not take over a lock whose live holder outlasts staleMs: the holder keeps it fresh', async () => {
    const staleMs = 500;
    const order: string[] = [];
    let letGo!: () => void;
    const working = new Promise<void>((resolve) => (letGo = resolve));
    const started = clock.now();
    const slow = withLock(
      lockPath,
      async () => {
        order.push('slow+');
        await working;
        order.push('slow-');
      },
      { staleMs, clock },
    );
    const firstSeen = await until(
      () =>
        stat(lockPath).then(
          (st) => st.mtimeMs,
          () => undefined,
        ),
      10_000,
      'the lock',
    );
    // The holder sets its heartbeat once it has the lock, a moment after the file appears (its temp is removed in
    // between): the clock moves only once the holder is at work, or the first beat would be set past where it went.
    await until(() => (order.length > 0 ? true : undefined), 10_000, 'the holder at work');
    const eager = withLock(
      lockPath,
      async () => {
        order.push('eager');
      },
      { staleMs, timeoutMs: 10_000, clock },
    );
    // The holder works for 1.6 s of the clock, more than three times staleMs. The heartbeat: the holder touches the
    // lock at the clock's time at each third of staleMs, again and again, so that a waiter judging it by its age (a
    // run on another host, or on a system without process start times) never finds it stale.
    const beatMs = Math.floor(staleMs / 3);
    let touched = firstSeen;
    while (clock.now() - started + beatMs <= 1600) {
      clock.advance(beatMs);
      const due = clock.now();
      touched = await until(
        () => stat(lockPath).then((st) => (Math.round(st.mtimeMs) === due ? st.mtimeMs : undefined)),
        10_000,
        `the heartbeat at ${due - started} ms`,
      );
    }
    expect(order).toEqual(['slow+']);
    expect(touched).toBeGreaterThan(clock.now() - staleMs);
    letGo();
    await clock.runUntilSettled(Promise.all([slow, eager]), 'both holders');
    expect(order).toEqual(['slow+', 'slow-', 'eager']);
  });

  it('never takes over a lock whose holder on this host still runs, however old; says how to resume it', async () => {
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], { stdio: 'ignore' });
    try {
      const pid = holder.pid!;
      const start = await until(() => processStart(pid), 10_000, "the holder's start time");
      // Untouched for two minutes, as the lock of a process stopped by Ctrl-Z or SIGSTOP would be.
      await plantLock(lockPath, { pid, host: hostname(), start }, 120_000);
      const { err, ran } = await refused({ timeoutMs: 500, staleMs: 100, guards: 'the configuration' });
      expect(ran).toBe(false);
      expect(err.code).toBe('LOCK_TIMED_OUT');
      expect(err.exitCode).toBe(ExitCode.USAGE);
      expect(err.message).toBe(
        `timed out after 0.5 s waiting for another idcli (pid ${pid} on ${hostname()}) to finish with the configuration: it holds the lock ${lockPath}`,
      );
      expect(err.hint).toContain(`kill -CONT ${pid}`);
      await stillPlanted();
    } finally {
      holder.kill();
    }
  });

  it('takes over at once a lock whose pid now belongs to another process (its start time differs)', async () => {
    await plantLock(lockPath, { pid: process.pid, host: hostname(), start: 'another-boot/1' });
    expect(await taken(async () => 'mine', { timeoutMs: 10_000 })).toEqual({ value: 'mine', waitedMs: 0 });
  });

  it('tells a holder whether the lock is still its own, right before it commits', async () => {
    const lost = (path: string) => usageError('LOCK_LOST', `lost ${path}`);
    const outcome = await withLock(lockPath, async (lease) => {
      await lease.confirm(lost);
      // Taken from it meanwhile: deleted by hand and made again by another run.
      await rm(lockPath);
      await plantLock(lockPath, { pid: process.pid, host: hostname() });
      return rejection(lease.confirm(lost));
    });
    expect(outcome.message).toBe(`lost ${lockPath}`);
    // Releasing it leaves the other run's lock alone.
    await stillPlanted();
  });

  it("removes the temp files of runs killed before they linked them, not a live run's", async () => {
    const path = configLockPath(dir.path);
    await mkdir(dirname(path), { recursive: true });
    const dead = await deadPid();
    const leftovers = [`${path}.${dead}.0123456789ab.tmp`, `${path}.reaper.${dead}.0123456789ab.tmp`];
    const live = `${path}.${process.pid}.0123456789ab.tmp`;
    const then = new Date(Date.now() - 60_000);
    for (const tmp of [...leftovers, live]) {
      await writeFile(tmp, '{}');
      await utimes(tmp, then, then);
    }
    expect(await withLock(path, async () => 'mine')).toBe('mine');
    expect(await readdir(dirname(path))).toEqual([live.slice(dirname(path).length + 1)]);
  });

  it('gives up waiting with exit 130 when the signal aborts', async () => {
    await plantLock(lockPath, { pid: 1, host: 'some-other-host.invalid' });
    const controller = new AbortController();
    // Aborted once it has started to wait for the planted lock, which no one will release.
    const onWait = () => controller.abort();
    const err = await rejection(
      withLock(lockPath, async () => {}, { signal: controller.signal, timeoutMs: 10_000, onWait }),
    );
    expect(err.exitCode).toBe(ExitCode.INTERRUPTED);
  });
  it("waitLimit ends the whole wait at its time with the caller's error, naming the holder", async () => {
    await plantLock(lockPath, { pid: 1, host: 'some-other-host.invalid' });
    const limit = clock.now() + 300;
    const { err, ran } = await refused({
      timeoutMs: 10_000,
      waitLimit: { at: limit, error: (who) => usageError('SIGN_IN_LOCK_TIMED_OUT', `gave up on ${who}`) },
    });
    expect(ran).toBe(false);
    expect(err.code).toBe('SIGN_IN_LOCK_TIMED_OUT');
    expect(err.message).toBe('gave up on pid 1 on some-other-host.invalid');
    // Exactly at its time: the pauses between looks are cut short to end there.
    expect(clock.now()).toBe(limit);
    await stillPlanted();
  });

  it('a waitLimit already past still takes a free lock', async () => {
    const waitLimit = { at: Date.now() - 1000, error: () => new Error('should not give up') };
    expect(await withLock(lockPath, async () => 'held', { waitLimit })).toBe('held');
  });

  it("refuses a symbolic link in the lock's place, dangling or not, at once (exit 2), and leaves it", async () => {
    await mkdir(dirname(lockPath), { recursive: true });
    for (const target of [join(dir.path, 'nowhere'), join(dir.path, 'a-file')]) {
      await writeFile(join(dir.path, 'a-file'), '');
      await rm(lockPath, { force: true });
      await symlink(target, lockPath);
      const err = await rejection(withLock(lockPath, async () => {}, { timeoutMs: 60_000 }));
      expect(err.exitCode).toBe(ExitCode.USAGE);
      expect(err.code).toBe('PATH_NOT_REGULAR');
      expect(err.message).toContain(lockPath);
      expect((await lstat(lockPath)).isSymbolicLink()).toBe(true);
    }
  });
});

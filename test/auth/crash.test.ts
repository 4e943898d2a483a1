/**
 * kill -9 at several points of a refresh. Whatever the moment, the next run either works or says to run
 * `idcli login`: never a corrupt record, never a crash, never a lock that stays stuck.
 *
 * No test hook is compiled into idcli; the CLI is paused at real seams instead: a lock held by the test (before
 * the request), emulator latency (request in flight), the emulator's log of its answer (after the response), and
 * random delays (during the write). With each credential store.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { lockPathFor, withLock } from '../../src/store/lock.js';
import type { CliResult } from '../support/cli.js';
import { describeEachStore, expectNoSecrets, type Harness, harness, login, until } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Starts `idcli <args>` and returns its child process once it exists, plus its result. */
function start(hh: Harness, args: string[]): { child: Promise<ChildProcess>; done: Promise<CliResult> } {
  let resolveChild!: (c: ChildProcess) => void;
  const child = new Promise<ChildProcess>((r) => {
    resolveChild = r;
  });
  const done = hh.run(args, {}, { onSpawn: resolveChild });
  return { child, done };
}

/** The run after a crash: exit 0 with a token, or exit 3 telling to log in. Nothing else is acceptable. */
async function expectRecoverable(hh: Harness): Promise<'works' | 'login'> {
  // The record is readable (a corrupt one would throw here), or absent.
  await hh.record();
  const r = await hh.run(['token', '--refresh']);
  if (r.code === 0) {
    expect(r.stdout).toMatch(/^\S+\n$/);
    return 'works';
  }
  expect(r.code, r.stderr).toBe(3);
  expect(r.stderr).toContain('run `idcli login`');
  expect(r.stderr).not.toMatch(/\n\s+at /);
  return 'login';
}

function tokenRequests(hh: Harness): number {
  return hh.emu.requests.filter((r) => r.path === '/oauth/token').length;
}

describeEachStore('kill -9 during a refresh', (store) => {
  it('before the request (waiting for the lock): the next run works', async () => {
    h = await harness({ store });
    await login(h);
    const configDir = join(h.dir, 'config');
    const before = tokenRequests(h);
    await withLock(lockPathFor(configDir, h.key()), async () => {
      const { child, done } = start(h!, ['token', '--refresh', '--verbose']);
      const c = await child;
      let said = '';
      c.stderr!.on('data', (b: Buffer) => {
        said += b.toString();
      });
      // --verbose says when the run finds the lock held and starts to wait for it.
      await until(() => (said.includes('waiting for another idcli') ? true : undefined), 20_000, 'the wait');
      expect(tokenRequests(h!)).toBe(before);
      c.kill('SIGKILL');
      expect((await done).signal).toBe('SIGKILL');
    });
    expect(await expectRecoverable(h)).toBe('works');
  });

  it('while the request is in flight: the next run recovers the dead lock and works or says to log in', async () => {
    h = await harness({ store });
    await login(h);
    const before = tokenRequests(h);
    h.emu.inject({ path: '/oauth/token', fault: { kind: 'latency', ms: 1500 } });
    const { child, done } = start(h, ['token', '--refresh']);
    const c = await child;
    await until(() => (tokenRequests(h!) > before ? true : undefined), 20_000, 'the refresh request');
    c.kill('SIGKILL');
    expect((await done).signal).toBe('SIGKILL');
    await new Promise((r) => setTimeout(r, 1700)); // the emulator finishes (or drops) the orphaned refresh
    // The killed process held the lock; its file is still there and must not block the next run.
    const started = Date.now();
    const outcome = await expectRecoverable(h);
    expect(Date.now() - started).toBeLessThan(20_000);
    if (outcome === 'login') {
      expect(await h.record()).toBeNull();
      await login(h);
      expect((await h.run(['token', '--refresh'])).code).toBe(0);
    }
  });

  it('after the response arrived: the next run works or says to log in', async () => {
    h = await harness({ store });
    await login(h);
    const okBefore = h.emu.tokenEvents.filter((e) => e.ok).length;
    const { child, done } = start(h, ['token', '--refresh']);
    const c = await child;
    await until(
      () => (h!.emu.tokenEvents.filter((e) => e.ok).length > okBefore ? true : undefined),
      20_000,
      'the refresh response',
    );
    c.kill('SIGKILL');
    await done;
    await expectRecoverable(h);
  });

  it('right after creating the lock file (still empty): the next run takes the lock over soon', async () => {
    h = await harness({ store });
    await login(h);
    const lockPath = lockPathFor(join(h.dir, 'config'), h.key());
    await mkdir(dirname(lockPath), { recursive: true });
    await writeFile(lockPath, ''); // what a process killed between open(O_EXCL) and write leaves behind
    const started = Date.now();
    const r = await h.run(['token', '--refresh']);
    expect(r.code, r.stderr).toBe(0);
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 60_000);

  it('at random moments, over and over: never a corrupt record', async () => {
    h = await harness({ store });
    await login(h);
    // Calibrate on this machine: how long does a whole refresh run take? The fastest of three, because the
    // first run is slowed by cold caches and kills timed from it would all come after the run had finished.
    const spans: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = Date.now();
      expect((await h.run(['token', '--refresh'])).code).toBe(0);
      spans.push(Date.now() - t0);
    }
    const span = Math.max(30, Math.min(...spans));
    const outcomes: string[] = [];
    for (let i = 0; i < 12; i++) {
      const { child, done } = start(h, ['token', '--refresh']);
      const c = await child;
      // Spread the kills from start-up to past the end, through the request, the response and the record write.
      const delay = Math.floor(span * (0.3 + (0.8 * i) / 12));
      await new Promise((r) => setTimeout(r, delay));
      c.kill('SIGKILL');
      const r = await done;
      outcomes.push(r.signal === 'SIGKILL' ? 'killed' : `exit ${r.code}: ${r.stderr.trim()}`);
      const next = await expectRecoverable(h);
      if (next === 'login') await login(h);
    }
    // At least some runs really were killed mid-way (the rest finished first, which is fine).
    expect(outcomes.filter((o) => o === 'killed').length, outcomes.join('\n')).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o !== 'killed' && !o.startsWith('exit 0'))).toEqual([]);
    expectNoSecrets(
      h,
      h.emu.secrets().filter((s) => h!.outputs.some((o) => o.startsWith(s))),
    );
  }, 180_000);
});

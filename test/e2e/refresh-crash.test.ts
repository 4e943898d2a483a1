/**
 * Needs a process: each test kills a real run of the built CLI with SIGKILL.
 * kill -9 at several points of a refresh. Whatever the moment, the next run either works or says to run
 * `idcli login`: never a corrupt record, never a crash, never a lock that stays stuck.
 *
 * No test hook is compiled into idcli; the CLI is paused at real seams instead: a lock held by the test (before
 * the request), emulator latency (request in flight), the emulator's log of its answer (after the response), and
 * --verbose lines plus random slack (during the write). With each credential store. The sign-in each test starts
 * from is stored as login leaves it, and the run after each kill is made in process: what is killed is always the
 * built CLI. A lock file left empty is in test/commands/token/empty-lock.test.ts, so that the forks run its wait
 * beside these tests.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it, type TestContext } from 'vitest';
import { lockPathFor, withLock } from '../../src/store/lock.js';
import type { CliResult } from '../support/cli.js';
import {
  describeEachStore,
  expectNoSecrets,
  type Harness,
  harness,
  login,
  storeLogin,
  type StoreKind,
} from '../support/harness.js';
import { until } from '../support/until.js';

/** A signed-in harness for the calling test (the sign-in stored as login leaves it), closed once it has finished. */
async function signedIn({ onTestFinished }: TestContext, store: StoreKind): Promise<Harness> {
  const h = await harness({ store, recordItems: 0 });
  onTestFinished(() => h.close());
  await storeLogin(h);
  return h;
}

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
  const r = await hh.command(['token', '--refresh']);
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

// Each test has its own harness, and the CLI runs it kills are its own: the tests run at the same time.
describe.concurrent('kill -9 during a refresh, each test at once', () => {
  describeEachStore('kill -9 during a refresh', (store) => {
    it('before the request (waiting for the lock): the next run works', async (t) => {
      const h = await signedIn(t, store);
      const configDir = join(h.dir, 'config');
      const before = tokenRequests(h);
      await withLock(lockPathFor(configDir, h.key()), async () => {
        const { child, done } = start(h, ['token', '--refresh', '--verbose']);
        const c = await child;
        let said = '';
        c.stderr!.on('data', (b: Buffer) => {
          said += b.toString();
        });
        // --verbose says when the run finds the lock held and starts to wait for it.
        await until(() => (said.includes('waiting for another idcli') ? true : undefined), 20_000, 'the wait');
        expect(tokenRequests(h)).toBe(before);
        c.kill('SIGKILL');
        expect((await done).signal).toBe('SIGKILL');
      });
      expect(await expectRecoverable(h)).toBe('works');
    });

    it('while the request is in flight: the next run recovers the dead lock and works or says to log in', async (t) => {
      const h = await signedIn(t, store);
      const before = tokenRequests(h);
      h.emu.inject({ path: '/oauth/token', fault: { kind: 'latency', ms: 1500 } });
      const { child, done } = start(h, ['token', '--refresh']);
      const c = await child;
      const orphan = await until(
        () => h.emu.requests.filter((r) => r.path === '/oauth/token')[before],
        20_000,
        'the refresh request',
      );
      c.kill('SIGKILL');
      expect((await done).signal).toBe('SIGKILL');
      // The emulator holds the dead client's request until the latency has passed, then drops it: the next run
      // starts once it has let go, so the two never race.
      await until(() => orphan.handled, 20_000, 'the emulator to let go of the orphaned refresh');
      // The killed process held the lock; its file is still there and must not block the next run.
      const started = Date.now();
      const outcome = await expectRecoverable(h);
      expect(Date.now() - started).toBeLessThan(20_000);
      if (outcome === 'login') {
        expect(await h.record()).toBeNull();
        await login(h, [], {}, 'command');
        expect((await h.command(['token', '--refresh'])).code).toBe(0);
      }
    });

    it('after the response arrived: the next run works or says to log in', async (t) => {
      const h = await signedIn(t, store);
      const okBefore = h.emu.tokenEvents.filter((e) => e.ok).length;
      const { child, done } = start(h, ['token', '--refresh']);
      const c = await child;
      await until(
        () => (h.emu.tokenEvents.filter((e) => e.ok).length > okBefore ? true : undefined),
        20_000,
        'the refresh response',
      );
      c.kill('SIGKILL');
      await done;
      await expectRecoverable(h);
    });

    it('at points each run is seen to reach, plus random slack, over and over: never a corrupt record', async (t) => {
      const h = await signedIn(t, store);
      const hh = h;
      // Each run is killed after a point the test observes it reach, not after a time measured on this machine, so
      // a slow or loaded machine moves no kill past the end of the run: at start-up, with the request held by the
      // emulator, once the answer has arrived (--verbose logs it before the record is written: the kill lands in the
      // write or just after), and once the record is written. A random number of event-loop turns spreads the kills.
      const points = ['start-up', 'request held', 'answer arrived', 'record written'] as const;
      const outcomes: string[] = [];
      for (let i = 0; i < 12; i++) {
        const point = points[i % points.length]!;
        const before = tokenRequests(hh);
        if (point === 'request held') hh.emu.inject({ path: '/oauth/token', fault: { kind: 'latency', ms: 1000 } });
        const { child, done } = start(hh, ['token', '--refresh', '--verbose']);
        const c = await child;
        let said = '';
        c.stderr!.on('data', (b: Buffer) => {
          said += b.toString();
        });
        if (point === 'request held') await until(() => (tokenRequests(hh) > before ? true : undefined));
        if (point === 'answer arrived')
          await until(() => (/POST \S+\/oauth\/token -> 200/.test(said) ? true : undefined));
        if (point === 'record written')
          await until(() => (said.includes('refreshed the access token') ? true : undefined));
        for (let turns = Math.floor(Math.random() * 20); turns > 0; turns--) await new Promise(setImmediate);
        c.kill('SIGKILL');
        const r = await done;
        outcomes.push(`${point}: ${r.signal === 'SIGKILL' ? 'killed' : `exit ${r.code}: ${r.stderr.trim()}`}`);
        // A killed run's request may still be with the emulator, which would spend its refresh token later.
        await until(() => (hh.emu.requests.every((q) => q.handled) ? true : undefined), 20_000, 'the emulator');
        const next = await expectRecoverable(hh);
        if (next === 'login') await login(hh, [], {}, 'command');
      }
      // The runs killed before their request was answered really were killed mid-way; the others may have finished.
      const early = outcomes.filter((o) => o.startsWith('start-up') || o.startsWith('request held'));
      expect(
        early.filter((o) => !o.endsWith(': killed')),
        outcomes.join('\n'),
      ).toEqual([]);
      expect(outcomes.filter((o) => !o.endsWith(': killed') && !o.includes(': exit 0'))).toEqual([]);
      expectNoSecrets(
        hh,
        hh.emu.secrets().filter((s) => hh.outputs.some((o) => o.startsWith(s))),
      );
    }, 180_000);
  });
});

/**
 * `login --timeout` covers the wait for another idcli that holds these credentials' lock: past the deadline the
 * sign-in ends (exit 3, naming the holder) before any browser opens; a holder that lets go in time costs the wait
 * only what it took.
 *
 * The tests wait on real deadlines and share nothing (each has its own harness), so they run at the same time.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockPathFor, withLock } from '../../src/store/lock.js';
import { authorizeQueries, describeEachStore, type Harness, harness, login, type StoreKind } from './harness.js';

/** A harness signed in (in this process: it is set-up), for `test`; closed after it, whatever the outcome. */
async function signedIn<T>(store: StoreKind, test: (h: Harness) => Promise<T>): Promise<T> {
  const h = await harness({ store });
  try {
    await login(h, [], {}, 'command');
    return await test(h);
  } finally {
    await h.close();
  }
}

/**
 * Holds the sign-in's lock from this process, as a refreshing idcli would (a live pid, a fresh heartbeat), until
 * the returned function is called.
 */
async function holdLock(h: Harness): Promise<() => Promise<void>> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let taken!: () => void;
  const acquired = new Promise<void>((resolve) => (taken = resolve));
  const done = withLock(
    lockPathFor(join(h.dir, 'config'), h.key()),
    async () => {
      taken();
      await held;
    },
    { staleMs: 10_000 },
  );
  await acquired;
  return async () => {
    release();
    await done;
  };
}

describe.concurrent('login --timeout, each test at once', () => {
  describeEachStore('login --timeout while another idcli holds the lock', (store) => {
    it('ends at the deadline with exit 3 naming the holder, before any browser opens', async () => {
      await signedIn(store, async (h) => {
        const release = await holdLock(h);
        try {
          const opened = authorizeQueries(h.emu).length;
          const r = await h.run(['login', '--timeout', '2']);
          expect(r.code, r.stderr).toBe(3);
          expect(r.stdout).toBe('');
          expect(r.stderr).toMatch(
            new RegExp(
              `^error: the sign-in timed out waiting for another idcli \\(pid ${process.pid} on \\S+\\) to finish with these credentials \\(\\S+\\.lock\\); try again once it is done, or give login a longer --timeout\\n$`,
            ),
          );
          expect(authorizeQueries(h.emu)).toHaveLength(opened);
        } finally {
          await release();
        }
        // Once it is let go, the sign-in goes through.
        await login(h);
      });
    });

    it('a holder that lets go in time: the sign-in goes on, in the same run', async () => {
      // Let go once the login says it waits for the lock (under --verbose, when it first finds the lock held).
      const r = await loginWhileHeld(store, ['--timeout', '30'], 0);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('waiting for another idcli to finish with these credentials');
      expect(r.stderr).toContain('Signed in');
    });

    it('a holder that lets go late: the browser gets what is left, and the timeout still names the whole --timeout', async () => {
      // Let go a while after the login says it waits: that while is taken from the browser's wait, not from the message.
      const r = await loginWhileHeld(store, ['--timeout', '6', '--no-browser'], 2000);
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toMatch(/error: sign-in timed out after 6 s/);
    });
  });
});

/** `login args --verbose` while this process holds the lock, let go `lateMs` after the login says it waits. */
async function loginWhileHeld(store: StoreKind, args: string[], lateMs: number) {
  return signedIn(store, async (h) => {
    const release = await holdLock(h);
    let stderr = '';
    let released: Promise<void> | undefined;
    const r = await h.run(
      ['login', ...args, '--verbose'],
      {},
      {
        onSpawn: (child) =>
          child.stderr!.on('data', (chunk: Buffer) => {
            stderr += chunk.toString('utf8');
            if (released === undefined && stderr.includes('waiting for another idcli')) {
              released = new Promise((resolve) => setTimeout(resolve, lateMs)).then(release);
            }
          }),
      },
    );
    await released;
    expect(released).toBeDefined();
    return r;
  });
}

/**
 * kill -9 right after a refresh created its lock file, before it wrote its owner into it (see ./crash.test.ts): the
 * next run takes the lock over soon, once the empty file has gone stale.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockPathFor } from '../../src/store/lock.js';
import { describeEachStore, harness, login } from './harness.js';

// Each store's test waits for the file to go stale; the stores' tests share nothing, so they wait at once.
describe.concurrent('a lock file left empty', () => {
  describeEachStore('kill -9 during a refresh', (store) => {
    it('right after creating the lock file (still empty): the next run takes the lock over soon', async () => {
      const h = await harness({ store });
      try {
        await login(h, [], {}, 'command');
        const lockPath = lockPathFor(join(h.dir, 'config'), h.key());
        await mkdir(dirname(lockPath), { recursive: true });
        await writeFile(lockPath, ''); // what a process killed between open(O_EXCL) and write leaves behind
        const started = Date.now();
        const r = await h.run(['token', '--refresh']);
        expect(r.code, r.stderr).toBe(0);
        expect(Date.now() - started).toBeLessThan(30_000);
      } finally {
        await h.close();
      }
    }, 60_000);
  });
});

/**
 * kill -9 right after a refresh created its lock file, before it wrote its owner into it (see test/e2e/refresh-crash.test.ts): the
 * next run waits, and takes the lock over once the empty file has gone stale. The empty file is what such a kill
 * leaves; the run after it runs in process, and the file is made to look old by setting its mtime back rather than
 * by waiting for the staleness age to pass.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { lockPathFor } from '../../../src/store/lock.js';
import { until } from '../../support/until.js';
import { describeEachStore, harness, storeLogin } from '../../support/harness.js';
import { ageFile } from '../../support/lock-age.js';

/** How long a lock file may go untouched before the lock judges it abandoned, when its owner cannot be checked. */
const STALE_MS = 10_000;

describeEachStore('kill -9 during a refresh', (store) => {
  it('right after creating the lock file (still empty): the next run waits, then takes the lock over', async () => {
    const h = await harness({ store, recordItems: 0 });
    try {
      await storeLogin(h);
      const lockPath = lockPathFor(join(h.dir, 'config'), h.key());
      await mkdir(dirname(lockPath), { recursive: true });
      await writeFile(lockPath, ''); // what a process killed between open(O_EXCL) and write leaves behind
      let said = '';
      const run = h.command(['token', '--refresh', '--verbose'], {}, { onStderr: (text) => void (said += text) });
      // A fresh empty file could be a run between its create and its write: the next run waits for it.
      await until(() => (said.includes('waiting for another idcli') ? true : undefined), 20_000, 'the wait');
      expect(h.emu.tokenEvents).toHaveLength(0); // the waiting run has sent nothing
      await ageFile(lockPath, STALE_MS + 1000);
      const r = await run;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`${(await h.record())?.accessToken}\n`);
    } finally {
      await h.close();
    }
  });
});

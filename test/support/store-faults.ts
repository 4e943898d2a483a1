/**
 * The set-up of the store-fault tests, in process (test/store/faults.test.ts) and as another user
 * (test/e2e/store-faults.test.ts): a harness of each test's own, closed with whatever else the test opened, and
 * where its config directory, credentials directory and record are.
 */
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { FileStore } from '../../src/store/file-store.js';
import { type Harness, harness, type StoreKind } from './harness.js';

export const configDirOf = (h: Harness): string => join(h.dir, 'config');
export const credentialsDirOf = (h: Harness): string => join(configDirOf(h), 'credentials');
export const recordPathOf = (h: Harness): Promise<string> =>
  new FileStore({ configDir: configDirOf(h) }).pathFor(h.key());

/**
 * Registers, for the calling file, the undoing after each test of what it handed to `cleanups.push` (last first), and
 * returns the list with `newHarness`, a harness on `store` closed the same way.
 */
export function eachFaultTest(): {
  cleanups: (() => Promise<void>)[];
  newHarness: (store: StoreKind) => Promise<Harness>;
} {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const newHarness = async (store: StoreKind): Promise<Harness> => {
    const h = await harness({ store });
    cleanups.push(() => h.close());
    return h;
  };
  return { cleanups, newHarness };
}

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Says which test the suite's gnome-keyring died under, when it does (scripts/with-keyring.sh).
    setupFiles: ['test/support/keyring-watch.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Most tests run commands in process, but many still wait on servers, processes and signals:
    // six forks keep both cores of the reference machine busy where four left them idle a quarter of the time (the
    // commit that set it has the figures). Forks, not threads: a script one test thread has just written can still be
    // open for writing in a child that another thread is forking, and exec then fails with ETXTBSY.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 6, minForks: 1 } },
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Says which test the suite's gnome-keyring died under, when it does (scripts/with-keyring.sh).
    setupFiles: ['test/support/keyring-watch.ts'],
    // Integration tests mostly wait on the CLI, servers and signals they spawn: on two cores four forks keep both
    // busy where two left one idle most of the time; more forks only add start-up work to a busy machine (the
    // commits that set and checked it have the figures). Forks, not threads: a script one test thread has just
    // written can still be open for writing in a child that another thread is forking, and exec then fails with
    // ETXTBSY.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 4, minForks: 1 } },
  },
});

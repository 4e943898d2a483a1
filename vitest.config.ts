import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Says which test the suite's gnome-keyring died under, when it does (scripts/with-keyring.sh).
    setupFiles: ['test/support/keyring-watch.ts'],
    // Integration tests mostly wait on the CLI, servers and signals they spawn: on two cores four forks keep both
    // busy where two left one idle most of the time (the commit that set it has the figures).
    pool: 'forks',
    poolOptions: { forks: { maxForks: 4, minForks: 1 } },
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Says which test the suite's gnome-keyring died under, when it does (scripts/with-keyring.sh).
    setupFiles: ['test/support/keyring-watch.ts'],
    // Integration tests spawn the CLI and servers; two cores are the norm here, so keep the fan-out modest.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});

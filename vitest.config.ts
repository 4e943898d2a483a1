import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Says which test the suite's gnome-keyring died under, when it does (scripts/with-keyring.sh); fails a file that
    // leaves its test process changed for the files after it.
    setupFiles: ['test/support/keyring-watch.ts', 'test/support/process-hygiene.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Most tests run commands in process, but many still wait on servers, processes and signals:
    // six forks keep both cores of the reference machine busy where four left them idle a quarter of the time (the
    // commit that set it has the figures). Forks, not threads: a script one test thread has just written can still be
    // open for writing in a child that another thread is forking, and exec then fails with ETXTBSY.
    pool: 'forks',
    // Each fork runs file after file instead of a process per file: starting a process and loading the modules anew
    // for each of the suite's files cost more than a quarter of its time. process-hygiene.ts keeps the files apart.
    // As many forks kept as started: one that idles is stopped by the pool, and stopped mid-teardown it fails the
    // run ("Terminating worker thread") and outlives it.
    poolOptions: { forks: { maxForks: 6, minForks: 6, isolate: false } },
  },
});

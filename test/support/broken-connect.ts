/**
 * The set-up of the tests whose requests fail at a proxy's CONNECT, in process and in test/e2e/: the list context of
 * eachEmulator(), an https:// target nothing listens at, and the broken proxy (test/support/proxy.ts) a test starts.
 */
import { afterEach, beforeEach } from 'vitest';
import { eachEmulator, type ListContext } from './list.js';
import { type BrokenProxy, type ConnectFault, startBrokenProxy } from './proxy.js';
import { unusedPort } from './listen.js';

/** The list context of a test whose requests fail at a proxy's CONNECT. */
export interface BrokenConnect extends ListContext {
  /** An https:// API nothing listens at: the CONNECT fails before any request could reach it. */
  readonly target: string;
  /** The proxy start() made for the running test, if it made one. */
  readonly proxy: BrokenProxy | undefined;
  /** Starts the running test's proxy, answering each CONNECT with `fault`; it is closed after the test. */
  start(fault: ConnectFault): Promise<BrokenProxy>;
}

/** Registers, for every test of the calling suite, eachEmulator()'s emulator and environment and a target. */
export function eachBrokenConnect(): BrokenConnect {
  const ctx = eachEmulator();
  let proxy: BrokenProxy | undefined;
  let target: string | undefined;
  beforeEach(async () => {
    target = `https://127.0.0.1:${await unusedPort()}`;
  });
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
    target = undefined;
  });
  return {
    get emu() {
      return ctx.emu;
    },
    get env() {
      return ctx.env;
    },
    get target() {
      if (target === undefined) throw new Error('the target of a proxy test exists only while the test runs');
      return target;
    },
    get proxy() {
      return proxy;
    },
    async start(fault) {
      proxy = await startBrokenProxy(fault);
      return proxy;
    },
  };
}

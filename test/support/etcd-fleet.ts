/**
 * The fleet of the etcd tests (etcd-fleet*.test.ts): machines sharing one sign-in through a real etcd cluster
 * (IDCLI_CREDENTIAL_STORE=etcd), each with its own HOME and config directory, run as processes where concurrency
 * across processes or a killed holder is the point and in this process otherwise; the emulator's refresh-token reuse
 * detection is the judge: a refresh token sent twice revokes the chain.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, type TestContext } from 'vitest';
import { EtcdStore } from '../../src/store/etcd-store.js';
import type { CredentialRecord } from '../../src/store/record.js';
import type { CliResult } from './cli.js';
import { type EtcdCluster, etcdMachine, startEtcdCluster } from './etcd-cluster.js';
import { expectNoSecrets, type Harness, harness, refreshGrants, storeLogin, tokenForms } from './harness.js';

let prefixes = 0;

/** What a run says under --verbose when another idcli holds the lock (src/oauth/session.ts). */
export const WAITING_FOR_LOCK = 'waiting for another idcli to finish with these credentials';

/**
 * One cluster for the calling file, started before its first test and closed after its last: what the returned
 * function gives while the tests run. `startMs` bounds the start.
 */
export function clusterForFile(startMs = 60_000): () => EtcdCluster {
  let cluster: EtcdCluster | undefined;
  beforeAll(async () => {
    cluster = await startEtcdCluster();
  }, startMs);
  afterAll(async () => {
    await cluster?.close();
  });
  return () => {
    if (cluster === undefined) throw new Error('the etcd cluster did not start');
    return cluster;
  };
}

/**
 * A harness for the calling test, closed once it has finished: tests that run at once each have their own. Its
 * emulator serves no records: no fleet test lists them.
 */
export async function harnessFor({ onTestFinished }: TestContext): Promise<Harness> {
  const h = await harness({ recordItems: 0 });
  onTestFinished(() => h.close());
  return h;
}

/** A fleet: machine i's environment (its own HOME and config directory), all on one prefix of the cluster. */
export function fleet(hh: Harness, c: EtcdCluster, extra: Record<string, string> = {}) {
  const prefix = `/idcli-test-${process.pid}-${prefixes++}/`;
  const machine = (i: number) => etcdMachine(join(hh.dir, `machine-${i}`), c, prefix, extra);
  const store = () => new EtcdStore({ endpoints: c.members.map((m) => m.clientUrl), prefix });
  const record = async (): Promise<CredentialRecord | null> => {
    const s = store();
    try {
      return await s.read(hh.key());
    } finally {
      s.close();
    }
  };
  /** A sign-in stored in etcd as `idcli login` on a machine of the fleet leaves it, without the browser flow. */
  const signIn = async (): Promise<CredentialRecord> => {
    const s = store();
    try {
      return await storeLogin(hh, { store: s });
    } finally {
      s.close();
    }
  };
  /** The key of the fleet's lock on the sign-in. */
  const lockKey = (): string => {
    const s = store();
    try {
      return s.lockKey(hh.key());
    } finally {
      s.close();
    }
  };
  return { prefix, machine, record, store, signIn, lockKey };
}

export function refreshTokensSent(hh: Harness): string[] {
  return tokenForms(hh.emu)
    .filter((f) => f.grant_type === 'refresh_token')
    .map((f) => f.refresh_token ?? '');
}

/**
 * Starts a refresh on `machine` and SIGKILLs it the moment its refresh request reaches the service, which drops that
 * request unprocessed. The holder dies holding the lock, after writing its in-flight marker.
 */
export async function killHolderMidRefresh(hh: Harness, machine: Record<string, string>): Promise<void> {
  hh.emu.inject({ path: '/oauth/token', fault: { kind: 'drop' } });
  let holder: ChildProcess | undefined;
  let arrived = false;
  hh.emu.onRequest((r) => {
    if (r.path !== '/oauth/token' || arrived || !holder?.pid) return;
    arrived = true;
    process.kill(holder.pid, 'SIGKILL');
  });
  const run = hh.run(['token', '--refresh'], machine, {
    onSpawn: (c) => {
      holder = c;
    },
  });
  const ended = await run;
  hh.emu.onRequest(undefined);
  expect(arrived).toBe(true);
  expect(ended.signal).toBe('SIGKILL');
}

/** Every machine printed a token from a refresh made after it started; no refresh token went out twice. */
export async function expectFleetRefreshed(
  hh: Harness,
  f: ReturnType<typeof fleet>,
  results: CliResult[],
  before: string | undefined,
): Promise<void> {
  for (const r of results) {
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\S+\n$/);
  }
  // A request the service dropped unprocessed (a fault) spent nothing; its token may go out once more.
  const refreshes = refreshGrants(hh).filter((e) => !e.error?.startsWith('fault:'));
  expect(refreshes.length).toBeGreaterThanOrEqual(1);
  expect(refreshes.every((e) => e.ok && !e.reuse)).toBe(true);
  const sent = refreshTokensSent(hh);
  expect(new Set(sent).size).toBe(sent.length - (refreshGrants(hh).length - refreshes.length));
  const printed = results.map((r) => r.stdout.trim());
  expect(printed).not.toContain(before);
  const rec = await f.record();
  expect(printed).toContain(rec?.accessToken);
  // The chain is intact: one more refresh proves the last stored verifier.
  const after = await hh.command(['token', '--refresh'], f.machine(99));
  expect(after.code, after.stderr).toBe(0);
  expect(refreshGrants(hh).every((e) => (e.ok && !e.reuse) || e.error?.startsWith('fault:'))).toBe(true);
  expectNoSecrets(hh, [...printed, after.stdout.trim()]);
}

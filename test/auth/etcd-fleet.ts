/**
 * The fleet of the etcd tests (etcd-fleet*.test.ts): machines sharing one sign-in through a real etcd cluster
 * (IDCLI_CREDENTIAL_STORE=etcd). Each machine is a process with its own HOME and config directory; the emulator's
 * refresh-token reuse detection is the judge: a refresh token sent twice revokes the chain.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { EtcdStore } from '../../src/store/etcd-store.js';
import type { CredentialRecord } from '../../src/store/record.js';
import type { CliResult } from '../support/cli.js';
import type { EtcdCluster } from '../support/etcd-cluster.js';
import { expectNoSecrets, type Harness, refreshGrants, tokenForms } from './harness.js';

let prefixes = 0;

/** A fleet: machine i's environment (its own HOME and config directory), all on one prefix of the cluster. */
export function fleet(hh: Harness, c: EtcdCluster, extra: Record<string, string> = {}) {
  const prefix = `/idcli-test-${process.pid}-${prefixes++}/`;
  const machine = (i: number): Record<string, string> => {
    const home = join(hh.dir, `machine-${i}`);
    mkdirSync(join(home, 'config'), { recursive: true, mode: 0o700 });
    return {
      HOME: home,
      IDCLI_CONFIG_DIR: join(home, 'config'),
      IDCLI_CREDENTIAL_STORE: 'etcd',
      IDCLI_ETCD_ENDPOINTS: c.members.map((m) => m.clientUrl).join(','),
      IDCLI_ETCD_PREFIX: prefix,
      ...extra,
    };
  };
  const store = () => new EtcdStore({ endpoints: c.members.map((m) => m.clientUrl), prefix });
  const record = async (): Promise<CredentialRecord | null> => {
    const s = store();
    try {
      return await s.read(hh.key());
    } finally {
      s.close();
    }
  };
  return { prefix, machine, record, store };
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
  _live?: unknown,
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
  const after = await hh.run(['token', '--refresh'], f.machine(99));
  expect(after.code, after.stderr).toBe(0);
  expect(refreshGrants(hh).every((e) => (e.ok && !e.reuse) || e.error?.startsWith('fault:'))).toBe(true);
  expectNoSecrets(hh, [...printed, after.stdout.trim()]);
}

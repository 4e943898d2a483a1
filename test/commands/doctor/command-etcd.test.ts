/**
 * `doctor` with the etcd store against a real three-member cluster: the members and their version, the quorum, the
 * permissions on the prefix (a probe key written and removed), the clock against the members; then with one member
 * down, and with two.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { etcdMachine } from '../../support/etcd-cluster.js';
import { clusterForFile } from '../../support/etcd-fleet.js';
import { type Harness, harness } from '../../support/harness.js';

interface Check {
  id: string;
  status: 'pass' | 'warn' | 'fail';
  detail: string;
  fix?: string;
}

const c = clusterForFile(90_000);
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const PREFIX = '/doctor-fleet/';

async function doctor(hh: Harness): Promise<{ code: number | null; checks: Map<string, Check>; stderr: string }> {
  const r = await hh.command(['doctor', '--json'], etcdMachine(join(hh.dir, 'machine'), c(), PREFIX));
  const report = JSON.parse(r.stdout) as { checks: Check[] };
  return { code: r.code, checks: new Map(report.checks.map((x) => [x.id, x])), stderr: r.stderr };
}

describe('idcli doctor with the etcd store', () => {
  it('all members up: each with its version, the quorum, the prefix read and written, the clock in step', async () => {
    h = await harness();
    const { code, checks, stderr } = await doctor(h);
    expect(checks.get('store')?.detail).toContain('etcd');
    const members = checks.get('etcd-members')!;
    expect(members.status, members.detail).toBe('pass');
    expect(members.detail).toContain('3 of 3 answer');
    for (const m of c().members) expect(members.detail).toContain(`${m.clientUrl} (etcd 3.`);
    expect(members.detail).toContain('leader');
    expect(checks.get('etcd-quorum')).toMatchObject({ status: 'pass' });
    expect(checks.get('etcd-quorum')?.detail).toContain('3 of 3 members');
    expect(checks.get('etcd-access')).toMatchObject({ status: 'pass', detail: `read and wrote under ${PREFIX}` });
    expect(checks.get('etcd-clock')).toMatchObject({ status: 'pass' });
    expect(code, stderr).toBe(0);
    // The probe key is gone again.
    expect(c().ctl(['get', '--prefix', '--keys-only', PREFIX]).trim()).toBe('');
  }, 60_000);

  it('one member down: a warning naming it, and the quorum still holds', async () => {
    h = await harness();
    await c().kill(2);
    // A member down, not an election under way: the two left have a leader again.
    await c().settled();
    const { checks } = await doctor(h);
    const members = checks.get('etcd-members')!;
    expect(members.status, members.detail).toBe('warn');
    expect(members.detail).toContain('2 of 3 answer');
    expect(members.detail).toContain(`${c().members[2]!.clientUrl}: `);
    expect(members.fix).toContain('IDCLI_ETCD_ENDPOINTS');
    expect(checks.get('etcd-quorum')).toMatchObject({ status: 'pass' });
    expect(checks.get('etcd-access')).toMatchObject({ status: 'pass' });
  }, 60_000);

  it('two members down: the quorum fails, naming the members tried', async () => {
    h = await harness();
    await c().kill(1);
    const { code, checks } = await doctor(h);
    expect(code).toBe(2);
    expect(checks.get('etcd-members')?.detail).toContain('1 of 3 answer');
    const quorum = checks.get('etcd-quorum')!;
    expect(quorum.status).toBe('fail');
    expect(quorum.detail).toContain('no etcd member answered with a quorum');
    expect(checks.get('etcd-access')?.status).toBe('fail');
  }, 90_000);
});

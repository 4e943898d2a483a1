/**
 * `doctor`'s checks of the etcd store (docs/cli.md, "Shared sign-in"): each member and its version, the cluster's
 * quorum, the permissions on the prefix, and this machine's clock against the members'. Loaded only for that store.
 */
import { hostname } from 'node:os';
import { IdcliError } from '../../errors.js';
import { b64, type MemberAnswer } from '../../store/etcd-client.js';
import type { EtcdStore } from '../../store/etcd-store.js';
import { type CheckResult, check } from './checks.js';

/** Beyond this a token's expiry, written in one machine's clock and read in another's, is off by more than noise. */
const CLOCK_WARN_SEC = 3;

export async function checkEtcd(store: EtcdStore, now: () => number): Promise<CheckResult[]> {
  const answers = await askMembers(store, now);
  const answered = answers.filter((a): a is Answered => 'json' in a);
  const results = [membersResult(answers)];
  if (answered.length === 0) {
    const fix = 'start the members, or fix IDCLI_ETCD_ENDPOINTS';
    results.push(check('etcd-quorum', 'etcd quorum')('fail', 'skipped: no member answered', fix));
    results.push(check('etcd-access', 'etcd permissions')('fail', 'skipped: no member answered', fix));
  } else {
    const quorum = await quorumResult(store, answered);
    // Without a quorum the probe could only wait as long again to fail the same way.
    const access =
      quorum.status === 'pass'
        ? await accessResult(store)
        : check('etcd-access', 'etcd permissions')('fail', 'skipped: the cluster has no quorum', quorum.fix);
    results.push(quorum, access);
  }
  results.push(etcdClockSkew(answered));
  return results;
}

type Answered = MemberAnswer & { endpoint: string; localDate: number };
type Member = Answered | { endpoint: string; failure: string };

/** Each member's own status (maintenance/status): its version and the leader it knows, and its clock. */
async function askMembers(store: EtcdStore, now: () => number): Promise<Member[]> {
  return Promise.all(
    store.client.endpoints.map(async (endpoint): Promise<Member> => {
      try {
        const answer = await store.client.ask(endpoint, '/v3/maintenance/status', {});
        return 'failure' in answer ? { endpoint, ...answer } : { endpoint, ...answer, localDate: now() };
      } catch (err) {
        if (err instanceof IdcliError) return { endpoint, failure: err.message };
        throw err;
      }
    }),
  );
}

function membersResult(members: Member[]): CheckResult {
  const verdict = check('etcd-members', 'etcd members');
  const up = members.filter((m): m is Answered => 'json' in m);
  const said = members.map((m) => {
    if (!('json' in m)) return `${m.endpoint}: ${m.failure}`;
    const version = typeof m.json.version === 'string' ? m.json.version : 'version unknown';
    const header = m.json.header as { member_id?: unknown } | undefined;
    const leader = m.json.leader !== undefined && m.json.leader === header?.member_id ? ', leader' : '';
    return `${m.endpoint} (etcd ${version}${leader})`;
  });
  const detail = `${up.length} of ${members.length} answer: ${said.join('; ')}`;
  if (up.length === members.length) return verdict('pass', detail);
  const fix = 'start the members that do not answer, or remove them from IDCLI_ETCD_ENDPOINTS';
  return verdict(up.length === 0 ? 'fail' : 'warn', detail, fix);
}

/**
 * A lease is granted only through the raft log, so only with a quorum behind the leader; unlike a read of the prefix
 * it needs no permission, which the next check judges. The lease is revoked at once (it would lapse anyway).
 */
async function quorumResult(store: EtcdStore, answered: Answered[]): Promise<CheckResult> {
  const verdict = check('etcd-quorum', 'etcd quorum');
  try {
    const lease = await store.client.call('/v3/lease/grant', { TTL: 5 });
    await store.client.call('/v3/lease/revoke', { ID: lease.ID }).catch(() => {});
    const size = await clusterSize(store);
    const of = size === undefined ? '' : ` (${answered.length} of ${size} members answer)`;
    return verdict('pass', `the cluster commits a write${of}`);
  } catch (err) {
    if (!(err instanceof IdcliError)) throw err;
    return verdict('fail', err.message, err.hint);
  }
}

async function clusterSize(store: EtcdStore): Promise<number | undefined> {
  try {
    const list = await store.client.call('/v3/cluster/member/list', {});
    return Array.isArray(list.members) ? list.members.length : undefined;
  } catch {
    return undefined;
  }
}

/** A read of the prefix and a harmless write: a probe key of this machine's, put and deleted at once. */
async function accessResult(store: EtcdStore): Promise<CheckResult> {
  const verdict = check('etcd-access', 'etcd permissions');
  const probe = `${store.prefix}doctor/${hostname()}-${process.pid}`;
  try {
    const end = b64(prefixEnd(store.prefix));
    await store.client.call('/v3/kv/range', { key: b64(store.prefix), range_end: end, keys_only: true, limit: '1' });
    await store.client.call('/v3/kv/put', { key: b64(probe), value: b64('idcli doctor') });
    await store.client.call('/v3/kv/deleterange', { key: b64(probe) });
    return verdict('pass', `read and wrote under ${store.prefix}`);
  } catch (err) {
    if (!(err instanceof IdcliError)) throw err;
    return verdict('fail', err.message, err.hint);
  }
}

/** The first key after every key that starts with `prefix` (etcd's range_end for a prefix). */
function prefixEnd(prefix: string): string {
  const bytes = Buffer.from(prefix, 'utf8');
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i]! < 0xff) {
      bytes[i] = bytes[i]! + 1;
      return bytes.subarray(0, i + 1).toString('latin1');
    }
  }
  return '\0';
}

/** The members' clocks from their Date headers: the machine farthest from them decides. */
function etcdClockSkew(answered: readonly Answered[]): CheckResult {
  const dated = answered.filter((a) => a.date !== undefined);
  const skews = dated.map((a) => (a.localDate - a.date!) / 1000);
  const worst = skews.reduce((w, s) => (Math.abs(s) > Math.abs(w) ? s : w), 0);
  return checkEtcdClock(dated.length === 0 ? undefined : worst);
}

/** Expiries are written in the clock of the machine that refreshed and read in every other's. */
export function checkEtcdClock(skewSec: number | undefined): CheckResult {
  const verdict = check('etcd-clock', 'clock against etcd');
  if (skewSec === undefined) return verdict('warn', 'no member sent a Date header (or none answered); skew unknown');
  // The Date header has one-second resolution: a second of difference is noise.
  const skew = Math.round(skewSec);
  const ahead = skew > 0 ? 'ahead of' : 'behind';
  const detail = skew === 0 ? 'in step with the members' : `this machine is ${Math.abs(skew)} s ${ahead} the members`;
  if (Math.abs(skew) <= CLOCK_WARN_SEC) return verdict('pass', detail);
  const fix = 'synchronise the clocks of this machine and the fleet (e.g. `timedatectl set-ntp true`)';
  return verdict('warn', `${detail}: machines of the fleet judge a token's expiry by different clocks`, fix);
}

/**
 * A lock held in etcd for one sign-in across a fleet: a key created only when absent, bound to a lease that this
 * run keeps alive while it holds it. A holder that dies frees it when the lease lapses (LEASE_TTL_SEC); the writes
 * of a holder whose lease lapsed are refused, as they compare the lock key's lease in their transaction.
 */
import { hostname } from 'node:os';
import { sleep, systemClock } from '../clock.js';
import { ExitCode, IdcliError, interrupted } from '../errors.js';
import { seconds } from '../duration.js';
import { isJsonObject } from '../shape.js';
import { b64, type EtcdClient, type EtcdKv, kvsOf, scalarText } from './etcd-client.js';
import type { SharedLockOptions } from './interface.js';

/** How long a dead holder keeps the fleet waiting; a live one renews it every third of it (docs/cli.md). */
export const LEASE_TTL_SEC = 10;
/** How long a run waits for others' turns in all, unless its caller gives a limit of its own (login --timeout). */
const WAIT_LIMIT_MS = 60_000;
const MIN_POLL_MS = 20;
const MAX_POLL_MS = 250;

export interface HeldLock {
  readonly lockKey: string;
  readonly lease: string;
  release(): Promise<void>;
}

/** Takes the lock, or returns what `whileWaiting` gave while another run held it. */
export async function acquireEtcdLock<T>(
  client: EtcdClient,
  lockKey: string,
  opts: SharedLockOptions<T>,
): Promise<{ held: HeldLock } | { value: T }> {
  const granted = await client.call('/v3/lease/grant', { TTL: LEASE_TTL_SEC });
  const lease = scalarText(granted.ID, '');
  if (lease === '' || lease === '0') throw new Error('etcd granted no lease');
  // eslint-disable-next-line no-restricted-globals -- etcd lapses the lease by its own clock; renewals keep up with it.
  const keepAlive = setInterval(
    () => void client.call('/v3/lease/keepalive', { ID: lease }).catch(() => {}),
    (LEASE_TTL_SEC * 1000) / 3,
  );
  keepAlive.unref();
  const held: HeldLock = {
    lockKey,
    lease,
    async release() {
      clearInterval(keepAlive);
      // Revoking the lease deletes the lock key with it; a failure leaves it to lapse.
      await client.call('/v3/lease/revoke', { ID: lease }).catch(() => {});
    },
  };
  try {
    const value = await takeTurn(client, lockKey, lease, opts);
    if (value === undefined) return { held };
    await held.release();
    return { value: value.value };
  } catch (err) {
    await held.release();
    throw err;
  }
}

async function takeTurn<T>(
  client: EtcdClient,
  lockKey: string,
  lease: string,
  opts: SharedLockOptions<T>,
): Promise<{ value: T } | undefined> {
  const clock = opts.clock ?? systemClock;
  const owner = JSON.stringify({ host: hostname(), pid: process.pid, at: clock.now() });
  const limit = opts.waitLimit ?? { at: clock.now() + WAIT_LIMIT_MS, error: timedOut };
  let waiting = false;
  /** The leases seen on the lock and found idcli's, asked about once. */
  const checked = new Set<string>();
  for (let round = 0; ; round++) {
    if (opts.signal?.aborted) throw interrupted();
    const txn = await client.call('/v3/kv/txn', {
      compare: [{ target: 'CREATE', key: b64(lockKey), create_revision: '0', result: 'EQUAL' }],
      success: [{ request_put: { key: b64(lockKey), value: b64(owner), lease } }],
      failure: [{ request_range: { key: b64(lockKey) } }],
    });
    if (txn.succeeded === true) return undefined;
    const current = lockOf(txn);
    // Our own put, applied by a member that timed out before answering and tried again on another.
    if (current?.lease === lease) return undefined;
    if (current && (await notIdclis(client, current, lockKey, checked))) {
      // idcli binds its lock to a lease, always: a key without one holds back no idcli. Taken on its revision, so of
      // two machines taking it over one wins and the other waits for it.
      const taken = await client.call('/v3/kv/txn', {
        compare: [{ target: 'MOD', key: b64(lockKey), mod_revision: String(current.modRevision), result: 'EQUAL' }],
        success: [{ request_put: { key: b64(lockKey), value: b64(owner), lease } }],
      });
      if (taken.succeeded === true) return undefined;
      continue;
    }
    const holder = holderOf(current);
    if (!waiting) {
      waiting = true;
      opts.onWait?.(lockKey);
    }
    const value = await opts.whileWaiting?.();
    if (value !== undefined) return { value };
    const now = clock.now();
    if (now >= limit.at) throw limit.error(holder, lockKey);
    const base = Math.min(MAX_POLL_MS, MIN_POLL_MS * 2 ** Math.min(round, 6));
    const pause = Math.min(Math.floor(base / 2 + Math.random() * base), limit.at - now);
    await sleep(clock, pause, opts.signal).catch(() => {});
  }
}

/**
 * Whether the lock key is not an idcli's: true when it has no lease (to be taken over); an error naming the key when
 * its lease was granted for longer than idcli ever asks, which would keep the fleet waiting without end.
 */
async function notIdclis(client: EtcdClient, kv: EtcdKv, lockKey: string, checked: Set<string>): Promise<boolean> {
  if (kv.lease === '0') return true;
  if (checked.has(kv.lease)) return false;
  let granted: number;
  try {
    const live = await client.call('/v3/lease/timetolive', { ID: kv.lease });
    granted = Number(scalarText(live.grantedTTL, '0'));
  } catch (err) {
    // Reading a lease needs access to every key on it: idcli's carries only its lock, under the prefix we may read.
    if (err instanceof IdcliError && err.code === 'ETCD_PERMISSION_DENIED') throw foreignLock(lockKey, undefined);
    throw err;
  }
  if (granted > LEASE_TTL_SEC) throw foreignLock(lockKey, granted);
  checked.add(kv.lease);
  return false;
}

function foreignLock(lockKey: string, granted: number | undefined): IdcliError {
  const lease = granted === undefined ? 'a lease that also holds keys outside the prefix' : `a lease of ${granted} s`;
  return new IdcliError(
    'ETCD_LOCK_FOREIGN',
    `the etcd lock ${lockKey} is held on ${lease}, which idcli never takes (its leases last ${LEASE_TTL_SEC} s)`,
    ExitCode.NETWORK,
    // Quoted for a shell: the key holds `|` between its parts.
    { hint: `if no idcli holds it, delete it: etcdctl del '${lockKey.replaceAll("'", "'\\''")}'` },
  );
}

function lockOf(txn: Record<string, unknown>): EtcdKv | undefined {
  const responses = Array.isArray(txn.responses) ? txn.responses : [];
  const first: unknown = responses[0];
  const range = isJsonObject(first) && isJsonObject(first.response_range) ? first.response_range : undefined;
  return kvsOf(range)[0];
}

/** `pid N on HOST` from the lock's value, or '' when it says nothing readable. */
function holderOf(kv: EtcdKv | undefined): string {
  if (!kv) return '';
  try {
    const o: unknown = JSON.parse(kv.value);
    if (isJsonObject(o) && typeof o.pid === 'number' && typeof o.host === 'string') return `pid ${o.pid} on ${o.host}`;
  } catch {
    // Not written by idcli: the holder stays unnamed.
  }
  return '';
}

function timedOut(holder: string, lockKey: string): IdcliError {
  const who = holder === '' ? '' : ` (held by ${holder})`;
  const message = `timed out after ${seconds(WAIT_LIMIT_MS)} s waiting for the etcd lock ${lockKey}${who}`;
  return new IdcliError('ETCD_LOCK_TIMED_OUT', message, ExitCode.NETWORK, {
    hint: `another machine is refreshing this sign-in; a holder that died frees it within ${LEASE_TTL_SEC} s`,
  });
}

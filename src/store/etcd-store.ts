/**
 * The credential record in etcd, shared by a fleet (docs/cli.md, "Shared sign-in"). Beside the record under
 * `prefix + account` live the lock (`prefix + lock/ + account`, bound to a lease) and the in-flight marker
 * (`prefix + in-flight/ + account`), written before a refresh token is sent and removed in the transaction that
 * stores its successor: a holder that died in between leaves it for the next one to see. Profile names hold no
 * `/`, so no account's key is another's lock or marker.
 */
import { hostname } from 'node:os';
import { type Clock, systemClock } from '../clock.js';
import { ExitCode, IdcliError, signInRejected } from '../errors.js';
import type { Env } from '../http/proxy-env.js';
import { isJsonObject, type JsonObject } from '../shape.js';
import { b64, EtcdClient, type EtcdKv, type EtcdUser, kvsOf } from './etcd-client.js';
import { etcdTrust } from './etcd-trust.js';
import { acquireEtcdLock, type HeldLock, LEASE_TTL_SEC } from './etcd-lock.js';
import type { CredentialStore, SharedLockOptions, WriteOptions } from './interface.js';
import { accountName, type CredentialKey, type CredentialRecord, decodeRecord, encodeRecord } from './record.js';
import { recordFrom } from './record.js';

export interface EtcdStoreOptions {
  endpoints: readonly string[];
  prefix: string;
  caCert?: string | undefined;
  cert?: string | undefined;
  key?: string | undefined;
  user?: EtcdUser | undefined;
  /** For the trust store's anchors when IDCLI_ETCD_CACERT is not given. */
  env?: Env;
  log?: { verbose(msg: string): void; isVerbose?: boolean };
  /** The clock of the client's waits (etcd-client.ts) and of the in-flight marker's time; the machine's by default. */
  clock?: Clock | undefined;
}

/** What a sign-in the server refused is replaced with, so every machine says the same thing (errors.signInRejected). */
const REJECTED = 'rejected';

export class EtcdStore implements CredentialStore {
  readonly kind = 'etcd' as const;
  readonly revisioned = true as const;
  readonly client: EtcdClient;
  readonly prefix: string;
  readonly #log: EtcdStoreOptions['log'];
  readonly #clock: Clock;
  /** The lock this run holds, per account. */
  readonly #held = new Map<string, HeldLock>();
  /** The record's mod_revision when this run last read it (0: absent): a write under the lock commits only on it. */
  readonly #seen = new Map<string, number>();
  /** Accounts whose in-flight marker this run wrote: from then on the refresh token may be spent. */
  readonly #sending = new Set<string>();

  constructor(opts: EtcdStoreOptions) {
    this.prefix = opts.prefix;
    this.#log = opts.log;
    this.#clock = opts.clock ?? systemClock;
    this.client = new EtcdClient({
      endpoints: opts.endpoints,
      user: opts.user,
      trust: etcdTrust(opts, opts.env ?? {}),
      ...(opts.log && { log: opts.log }),
      clock: this.#clock,
    });
  }

  describe(): string {
    return `etcd ${this.client.endpoints.join(',')} (prefix ${this.prefix})`;
  }

  recordKey(key: CredentialKey): string {
    return `${this.prefix}${accountName(key)}`;
  }

  lockKey(key: CredentialKey): string {
    return `${this.prefix}lock/${accountName(key)}`;
  }

  markerKey(key: CredentialKey): string {
    return `${this.prefix}in-flight/${accountName(key)}`;
  }

  /** One linearizable read; under the lock the marker is read in the same request, to tell of a lost refresh. */
  async read(key: CredentialKey): Promise<CredentialRecord | null> {
    return this.#afterSending(key, () => this.#read(key));
  }

  async #read(key: CredentialKey): Promise<CredentialRecord | null> {
    const account = accountName(key);
    const held = this.#held.has(account);
    const ranges = [this.recordKey(key), ...(held ? [this.markerKey(key)] : [])].map((k) => ({
      request_range: { key: b64(k) },
    }));
    const txn = await this.client.call('/v3/kv/txn', { success: ranges });
    const [record, marker] = responses(txn).map((r) => kvsOf(r.response_range as JsonObject | undefined)[0]);
    this.#seen.set(account, record?.modRevision ?? 0);
    if (marker) {
      this.#log?.verbose(
        `a refresh of this sign-in by ${holderText(marker.value)} ended before its answer was stored; trying once`,
      );
    }
    if (!record) return null;
    if (record.value === REJECTED) throw signInRejected();
    const decoded = recordFrom(this.recordKey(key), () => decodeRecord(record.value));
    return { ...decoded, revision: record.modRevision };
  }

  /** Under the lock, that it is still this run's: a write after a lapsed lease would be refused anyway. */
  async checkWritable(key: CredentialKey): Promise<void> {
    if (this.#held.has(accountName(key))) await this.#commit(key, []);
  }

  async beforeRefresh(key: CredentialKey): Promise<void> {
    // No machine compares this time (holderText reads the host and pid alone): the run's clock, as the lock owner's.
    const marker = JSON.stringify({ host: hostname(), pid: process.pid, at: this.#clock.now() });
    await this.#commit(key, [{ request_put: { key: b64(this.markerKey(key)), value: b64(marker) } }]);
    this.#sending.add(accountName(key));
  }

  async write(key: CredentialKey, record: CredentialRecord, _opts?: WriteOptions): Promise<void> {
    await this.#afterSending(key, () => this.#replace(key, encodeRecord(record)));
  }

  async reject(key: CredentialKey): Promise<void> {
    await this.#afterSending(key, () => this.#replace(key, REJECTED));
  }

  async delete(key: CredentialKey): Promise<boolean> {
    const txn = await this.#commit(key, [
      { request_delete_range: { key: b64(this.recordKey(key)) } },
      { request_delete_range: { key: b64(this.markerKey(key)) } },
    ]);
    const [removed] = responses(txn);
    return isJsonObject(removed?.response_delete_range) && Number(removed.response_delete_range.deleted ?? 0) > 0;
  }

  async withLock<T>(key: CredentialKey, fn: () => Promise<T>, opts: SharedLockOptions<T>): Promise<T> {
    const account = accountName(key);
    const taken = await acquireEtcdLock(this.client, this.lockKey(key), opts);
    if ('value' in taken) return taken.value;
    this.#held.set(account, taken.held);
    try {
      return await fn();
    } finally {
      this.#held.delete(account);
      this.#sending.delete(account);
      await taken.held.release();
    }
  }

  close(): void {
    this.client.close();
  }

  /**
   * Once the refresh went out, a cluster that no longer answers does not mean nothing was sent: the service may have
   * spent the refresh token, and its successor is only in this run's memory. The marker stays in etcd, so the next
   * holder tries the old token once and, refused, tells every machine to sign in again.
   */
  async #afterSending<T>(key: CredentialKey, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (err) {
      if (!this.#sending.has(accountName(key)) || !(err instanceof IdcliError)) throw err;
      if (err.code !== 'ETCD_UNAVAILABLE' && err.code !== 'ETCD_TLS_FAILED') throw err;
      throw refreshUnstored(err.message);
    }
  }

  /** The record replaced and the marker removed in one transaction, on the revision read under the lock. */
  async #replace(key: CredentialKey, value: string): Promise<void> {
    const account = accountName(key);
    const seen = this.#seen.get(account);
    const compare =
      seen === undefined
        ? []
        : [{ target: 'MOD', key: b64(this.recordKey(key)), mod_revision: String(seen), result: 'EQUAL' }];
    const ops = [
      { request_put: { key: b64(this.recordKey(key)), value: b64(value) } },
      { request_delete_range: { key: b64(this.markerKey(key)) } },
    ];
    // A member that timed out may still have applied it; tried again elsewhere, the comparison then fails on it.
    const ours = (kv: EtcdKv | undefined) => kv?.value === value;
    await this.#commit(key, ops, compare, ours);
    this.#seen.delete(account);
  }

  /** `ops` in one transaction that holds only while this run's lock is alive (when it holds one) and `compare`. */
  async #commit(
    key: CredentialKey,
    ops: JsonObject[],
    compare: JsonObject[] = [],
    applied?: (record: EtcdKv | undefined) => boolean,
  ): Promise<JsonObject> {
    const held = this.#held.get(accountName(key));
    const owns = held ? [{ target: 'LEASE', key: b64(held.lockKey), lease: held.lease, result: 'EQUAL' }] : [];
    const failure = [{ request_range: { key: b64(this.recordKey(key)) } }];
    const txn = await this.client.call('/v3/kv/txn', { compare: [...owns, ...compare], success: ops, failure });
    if (txn.succeeded === true) return txn;
    const [now] = responses(txn).map((r) => kvsOf(r.response_range as JsonObject | undefined)[0]);
    if (applied?.(now)) return txn;
    throw new IdcliError(
      'ETCD_LOCK_LOST',
      `the etcd lock on this sign-in lapsed (its lease lasts ${LEASE_TTL_SEC} s) or the record changed before it was stored`,
      ExitCode.NETWORK,
      { hint: 'run the command again; if it then says so, run `idcli login`' },
    );
  }
}

function refreshUnstored(why: string): IdcliError {
  return new IdcliError(
    'ETCD_REFRESH_UNSTORED',
    `the refresh was made but its answer could not be stored in etcd, so this sign-in may be lost (${why})`,
    ExitCode.NETWORK,
    {
      hint: 'once the cluster answers again (etcdctl endpoint health), run the command again; if it says so, run `idcli login`',
    },
  );
}

function responses(txn: JsonObject): JsonObject[] {
  return Array.isArray(txn.responses) ? txn.responses.filter(isJsonObject) : [];
}

function holderText(value: string): string {
  try {
    const o: unknown = JSON.parse(value);
    if (isJsonObject(o) && typeof o.pid === 'number' && typeof o.host === 'string') return `pid ${o.pid} on ${o.host}`;
  } catch {
    // Not idcli's marker: named vaguely.
  }
  return 'another idcli';
}

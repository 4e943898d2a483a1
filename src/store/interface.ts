import type { Clock } from '../clock.js';
import type { CredentialKey, CredentialRecord } from './record.js';

/** Where credential records live. Implementations: the OS keychain, the file store, etcd; `select.ts` picks one. */
export interface CredentialStore {
  readonly kind: 'keychain' | 'file' | 'etcd';
  /**
   * Records read carry `revision`, which orders every write to the store whatever the writer's clock: a store
   * shared by machines whose clocks differ tells a newer record by it, not by `updatedAt`.
   */
  readonly revisioned?: true;
  /** For status/doctor and messages, e.g. `OS keychain (service "idcli")` or `file /home/me/.config/idcli/credentials/…`. */
  describe(): string;
  /** null when nothing is stored; unreadable data is an IdcliError exit 3 telling to `idcli login`, never a crash. */
  read(key: CredentialKey): Promise<CredentialRecord | null>;
  /** Asked before spending what a failed write would lose (a refresh token, a sign-in); else exit 2 with the fix. */
  checkWritable(key: CredentialKey): Promise<void>;
  /** Why credentials land here rather than in the keychain; refreshes stay quiet, lest CI repeat it every run. */
  readonly notice?: string;
  /** Atomic: a crash at any point leaves either the old or the new record readable. */
  write(key: CredentialKey, record: CredentialRecord, opts?: WriteOptions): Promise<void>;
  delete(key: CredentialKey): Promise<boolean>;
  /**
   * A store shared by several machines takes turns itself (etcd): the lock file of one machine cannot. Its writes
   * under the lock commit only while the lock is still this run's and the record is the one last read.
   */
  withLock?<T>(key: CredentialKey, fn: () => Promise<T>, opts: SharedLockOptions<T>): Promise<T>;
  /** Called under the lock right before a refresh token is sent, so a holder that dies leaves that fact behind. */
  beforeRefresh?(key: CredentialKey): Promise<void>;
  /** The server refused the sign-in: remove it so that every other reader learns the same (else `delete`). */
  reject?(key: CredentialKey): Promise<void>;
}

export interface SharedLockOptions<T> {
  signal?: AbortSignal;
  /** Called once, when another holder is found and this run starts to wait; `where` names the lock. */
  onWait?: (where: string) => void;
  /** A limit on the whole wait (`clock` time): past `at` it ends with `error(holder, where)`. */
  waitLimit?: { at: number; error: (holder: string, where: string) => Error };
  /** The clock of the wait (its limit and its pauses between looks at the lock); the machine's by default. */
  clock?: Clock;
  /** Asked between looks at the lock: a value ends the wait without it (the holder stored what this run needs). */
  whileWaiting?: () => Promise<T | undefined>;
}

export interface WriteOptions {
  /** The record is a new sign-in (`login`), not a refresh: the user is told where it lands even when it replaces one. */
  signIn?: boolean;
  /**
   * Runs right before the write becomes the record (the rename, the keychain's head), where a throw leaves the old
   * record: a holder confirms there that its lock is still its own. Stores that take turns themselves ignore it.
   */
  beforeCommit?: () => Promise<void>;
}

/** Test seam for crash tests: called after the new data is durable but before the step that makes it current. */
export interface CommitHooks {
  beforeCommit?: () => Promise<void>;
}

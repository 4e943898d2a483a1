import type { CredentialKey, CredentialRecord } from './record.js';

/** Where credential records live. Implementations: the OS keychain and the file store; `select.ts` picks one. */
export interface CredentialStore {
  readonly kind: 'keychain' | 'file';
  /** For status/doctor and messages, e.g. `OS keychain (service "idcli")` or `file /home/me/.config/idcli/credentials/…`. */
  describe(): string;
  /** null when nothing is stored; unreadable data is an IdcliError exit 3 telling to `idcli login`, never a crash. */
  read(key: CredentialKey): Promise<CredentialRecord | null>;
  /**
   * Resolves when a write of `key`'s record can go through now; otherwise an IdcliError (exit 2) naming the store
   * and the fix. Asked before anything that a failed write would lose is spent: a refresh token, a sign-in.
   */
  checkWritable(key: CredentialKey): Promise<void>;
  /**
   * Why credentials land here rather than where the user asked (the keychain fallback); absent when this store
   * was chosen. The store tells it itself when a write creates a record or saves a sign-in; `status` and `doctor`
   * show it on request. Reads and refreshes of an existing record stay quiet: a CI job would repeat it on every run.
   */
  readonly notice?: string;
  /** Atomic: a crash at any point leaves either the old or the new record readable. */
  write(key: CredentialKey, record: CredentialRecord, opts?: WriteOptions): Promise<void>;
  /** true when something was removed. */
  delete(key: CredentialKey): Promise<boolean>;
}

export interface WriteOptions {
  /** The record is a new sign-in (`login`), not a refresh: the user is told where it lands even when it replaces one. */
  signIn?: boolean;
}

/**
 * Test seam for crash tests: called after the new data is durable but before the single step that makes it
 * current (the rename, the keychain head write). Production code never sets it.
 */
export interface CommitHooks {
  beforeCommit?: () => Promise<void>;
}

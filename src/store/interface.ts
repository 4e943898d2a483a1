import type { CredentialKey, CredentialRecord } from './record.js';

/** Where credential records live. Implementations: the OS keychain and the file store; `select.ts` picks one. */
export interface CredentialStore {
  readonly kind: 'keychain' | 'file';
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
}

export interface WriteOptions {
  /** The record is a new sign-in (`login`), not a refresh: the user is told where it lands even when it replaces one. */
  signIn?: boolean;
}

/** Test seam for crash tests: called after the new data is durable but before the step that makes it current. */
export interface CommitHooks {
  beforeCommit?: () => Promise<void>;
}

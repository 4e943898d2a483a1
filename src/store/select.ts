/** Which credential store to use; falling back from the keychain to a file only out loud (CredentialStore.notice). */
import { join } from 'node:path';
import type { CredentialStoreMode } from '../config.js';
import { usageError } from '../errors.js';
import type { FileStore, FileStoreOptions } from './file-store.js';
import type { EtcdStore, EtcdStoreOptions } from './etcd-store.js';
import type { CredentialStore } from './interface.js';
import type { KeychainStore, KeychainStoreOptions } from './keychain-store.js';
import type { KeyringClientOptions } from './keyring-client.js';

export interface OpenStoreOptions extends KeyringClientOptions {
  mode: CredentialStoreMode;
  configDir: string;
  warn: (msg: string) => void;
  /** The etcd store's settings, read only when that store is chosen. */
  etcd?: () => EtcdStoreOptions;
}

export async function openStore(opts: OpenStoreOptions): Promise<CredentialStore> {
  if (opts.mode === 'file') return newFileStore(opts);
  if (opts.mode === 'etcd') return newEtcdStore(opts);
  const keychain = await newKeychain(opts);
  const problem = await keychain.probe();
  if (problem === null) return keychain;
  keychain.close();
  if (opts.mode === 'keychain')
    throw usageError('KEYCHAIN_UNAVAILABLE', `keychain unavailable: ${problem}; set IDCLI_CREDENTIAL_STORE=file`);
  return newFileStore({
    ...opts,
    notice: `OS keychain unavailable (${problem}); storing credentials in ${join(opts.configDir, 'credentials')} instead (set IDCLI_CREDENTIAL_STORE=file to choose this explicitly)`,
  });
}

/** For logout: the keychain if it answers, and always the file store, as a record may sit in either. */
export async function allStores(
  opts: Omit<OpenStoreOptions, 'mode' | 'warn'> & Partial<Pick<OpenStoreOptions, 'mode' | 'warn'>>,
): Promise<CredentialStore[]> {
  // A shared sign-in lives in etcd alone: this machine's stores hold none of it.
  if (opts.mode === 'etcd') return [await newEtcdStore(opts)];
  const stores: CredentialStore[] = [];
  const keychain = await newKeychain(opts);
  if ((await keychain.probe()) === null) stores.push(keychain);
  else keychain.close();
  stores.push(await newFileStore(opts));
  return stores;
}

/** Each store's code loads only when that store is asked for: a run uses one of them, and each costs start-up. */
async function newFileStore(opts: FileStoreOptions): Promise<FileStore> {
  const { FileStore } = await import('./file-store.js');
  return new FileStore(opts);
}

async function newKeychain(opts: KeychainStoreOptions): Promise<KeychainStore> {
  const { KeychainStore } = await import('./keychain-store.js');
  return new KeychainStore(opts);
}

async function newEtcdStore(opts: Pick<OpenStoreOptions, 'etcd'>): Promise<EtcdStore> {
  const { EtcdStore } = await import('./etcd-store.js');
  if (!opts.etcd) throw new Error('the etcd store was chosen without its settings');
  return new EtcdStore(opts.etcd());
}

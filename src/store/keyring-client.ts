/**
 * The OS keychain through @napi-rs/keyring, called in this process: reads, writes, deletes and listing.
 *
 * A library call, once started, cannot be abandoned. On Linux, constructing an entry connects to the D-Bus
 * session bus and opens a Secret Service session synchronously on the main thread, and a locked item or
 * collection makes the library wait for an unlock prompt with no limit; elsewhere, and for the calls that run on
 * libuv's thread pool, a stuck call holds the process's exit (Node joins the pool before exiting). So on Linux a
 * bounded check of the bus and the keyring (secret-service-check.ts) runs before the library's first call, and
 * every call is given up on after the timeout. What remains is the bus or the service stalling, or the keyring
 * being locked, in the moment between the check and the library's calls; and buses the check does not speak (tcp:,
 * an authentication other than EXTERNAL), and macOS and Windows, where a keychain dialog likewise holds the call.
 */
import { ExitCode, IdcliError } from '../errors.js';
import { checkSecretService, keychainTimeoutReason, sessionBusOf } from './secret-service-check.js';

type KeyringModule = typeof import('@napi-rs/keyring');
type AsyncEntry = InstanceType<KeyringModule['AsyncEntry']>;

export const DEFAULT_KEYCHAIN_TIMEOUT_MS = 3000;

// Linux entries are pinned to the Secret Service, because the library's default falls back to the kernel keyring,
// which forgets everything at logout/reboot — a silent data loss that must instead surface as "keychain
// unavailable" so `auto` announces the file store.
const ENTRY_OPTIONS = { linux: { store: 'secret-service' as const } };
/** Read where no check tells whether the keychain works; normally it does not exist. */
const PROBE_ACCOUNT = 'idcli-keychain-probe';

export interface KeyringClientOptions {
  service: string;
  timeoutMs?: number;
  /**
   * Environment whose D-Bus session bus the check looks at; defaults to this process's. The library only ever uses
   * this process's own environment, so a different session bus is reported as unavailable rather than half used.
   */
  env?: Record<string, string | undefined>;
}

/** Raw byte access to entries of one keychain service. */
export interface KeyringBackend {
  /** Resolves when the keychain can be used; otherwise rejects with the reason (exit 2). Cheap to repeat. */
  ready(): Promise<void>;
  /** Like ready(), but looks again now: a keyring can be locked, or its collection removed, while a run waits. */
  writable(): Promise<void>;
  get(account: string): Promise<Buffer | null>;
  set(account: string, value: Buffer): Promise<void>;
  delete(account: string): Promise<boolean>;
  /** Account names stored under the service. */
  list(): Promise<string[]>;
  close(): void;
}

export class KeyringClient implements KeyringBackend {
  readonly service: string;
  readonly timeoutMs: number;
  readonly #env: Record<string, string | undefined>;
  #ready: Promise<KeyringModule> | null = null;
  /** One entry per account: on Linux, constructing one costs a D-Bus connection and a key exchange. */
  readonly #entries = new Map<string, AsyncEntry>();
  /** Set once the keychain failed in a way that makes further calls pointless (a timeout, no Secret Service). */
  #broken: IdcliError | null = null;

  constructor(opts: KeyringClientOptions) {
    this.service = opts.service;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_KEYCHAIN_TIMEOUT_MS;
    this.#env = opts.env ?? process.env;
  }

  async ready(): Promise<void> {
    await this.#library();
  }

  async writable(): Promise<void> {
    await this.#library();
    if (process.platform !== 'linux') return; // no check to repeat: a locked keychain prompts, within the timeout
    const check = await checkSecretService({ env: this.#env, timeoutMs: this.timeoutMs });
    if (check.status === 'unavailable') throw keychainError(check.reason);
  }

  async get(account: string): Promise<Buffer | null> {
    const secret = await this.#guard((await this.#entry(account)).getSecret());
    return secret === null ? null : Buffer.from(secret);
  }

  async set(account: string, value: Buffer): Promise<void> {
    // Bytes, not a password: on Windows a password is stored as UTF-16 and would halve the 2560-byte limit.
    await this.#guard((await this.#entry(account)).setSecret(value));
  }

  async delete(account: string): Promise<boolean> {
    return (await this.#guard((await this.#entry(account)).deleteCredential())) === true;
  }

  async list(): Promise<string[]> {
    const found = await this.#guard((await this.#library()).findCredentialsAsync(this.service));
    return found.map((c) => c.account).filter((a): a is string => typeof a === 'string');
  }

  /** Drops the entries and their D-Bus connections; a later call reconnects. */
  close(): void {
    this.#entries.clear();
  }

  /** The library, once the keychain is known to be usable; a failure marks it broken for the rest of the run. */
  #library(): Promise<KeyringModule> {
    if (this.#broken) return Promise.reject(this.#broken);
    this.#ready ??= this.#prepare().catch((err: unknown) => {
      throw this.#fail(err instanceof IdcliError ? err : libraryError(err));
    });
    return this.#ready;
  }

  async #prepare(): Promise<KeyringModule> {
    if (process.platform === 'linux') {
      const check = await checkSecretService({ env: this.#env, timeoutMs: this.timeoutMs });
      if (check.status === 'unavailable') throw keychainError(check.reason);
      if (sessionBusOf(this.#env) !== sessionBusOf(process.env)) {
        throw keychainError(
          "the D-Bus session asked for is not this process's own, the only one the keychain library uses",
        );
      }
      if (check.status === 'ready') return await loadKeyring();
    }
    // Nothing checked (another OS, or a bus the check does not speak): a real read tells, e.g. a macOS keychain
    // that cannot show its dialog in an SSH session. What it could not tell, nothing here can.
    const lib = await loadKeyring();
    await this.#guard(this.#construct(lib, PROBE_ACCOUNT).getSecret());
    return lib;
  }

  async #entry(account: string): Promise<AsyncEntry> {
    const lib = await this.#library();
    const entry = this.#entries.get(account) ?? this.#construct(lib, account);
    this.#entries.set(account, entry);
    return entry;
  }

  /** Synchronous and unguardable on Linux (see the top of this file): only ever called after a clean check. */
  #construct(lib: KeyringModule, account: string): AsyncEntry {
    try {
      return new lib.AsyncEntry(this.service, account, ENTRY_OPTIONS);
    } catch (err) {
      throw this.#fail(libraryError(err));
    }
  }

  /** The call's result, or a rejection once the timeout passes; the call itself runs on until the library returns. */
  #guard<T>(call: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timeout = (): void => reject(this.#fail(keychainError(keychainTimeoutReason(this.timeoutMs))));
      const timer = setTimeout(timeout, this.timeoutMs);
      call.then(resolve, (err: unknown) => reject(libraryError(err))).finally(() => clearTimeout(timer));
    });
  }

  /** A keychain that timed out or cannot connect will not recover within this run: later calls fail at once. */
  #fail(err: IdcliError): IdcliError {
    this.#broken ??= err;
    return err;
  }
}

async function loadKeyring(): Promise<KeyringModule> {
  try {
    // The binding stays outside the bundle: a CommonJS package with a native part. A missing optional platform
    // package (no prebuilt binary for this machine) fails here, which just means "no keychain".
    return await import('@napi-rs/keyring');
  } catch (err) {
    throw keychainError(`cannot load @napi-rs/keyring (${firstLine(messageOf(err))})`);
  }
}

/** Keychain trouble is a configuration problem of this machine (exit 2), the same class as "keychain demanded but unavailable". */
export function keychainError(message: string): IdcliError {
  return new IdcliError('KEYCHAIN_UNAVAILABLE', message, ExitCode.USAGE, {
    hint: 'set IDCLI_CREDENTIAL_STORE=file to use the file store',
  });
}

function libraryError(err: unknown): IdcliError {
  const message = firstLine(messageOf(err));
  // libdbus's NoReply message goes on to list every possible cause; the gist is enough.
  if (message.includes('Did not receive a reply')) return keychainError('the Secret Service did not answer in time');
  return keychainError(message);
}

/** An error's message, or the thrown value itself when it is not an Error. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

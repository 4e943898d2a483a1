/**
 * The OS keychain through @napi-rs/keyring, whose calls block without limit (D-Bus, an unlock prompt, a dialog): on
 * Linux a bounded check (secret-service-check.ts) runs first, and every call is given up on after the timeout.
 */
import { type Clock, systemClock } from '../clock.js';
import { IdcliError, usageError } from '../errors.js';
import { errMessage } from '../shape.js';
import { checkSecretService, keychainTimeoutReason, sessionBusOf } from './secret-service-check.js';

type KeyringModule = typeof import('@napi-rs/keyring');
type AsyncEntry = InstanceType<KeyringModule['AsyncEntry']>;

export const DEFAULT_KEYCHAIN_TIMEOUT_MS = 3000;

// Pinned to the Secret Service: the library's fallback, the kernel keyring, forgets everything at logout/reboot, a
// silent loss that must instead surface as "keychain unavailable" so `auto` announces the file store.
const ENTRY_OPTIONS = { linux: { store: 'secret-service' as const } };
/** Read where no check tells whether the keychain works; normally it does not exist. */
const PROBE_ACCOUNT = 'idcli-keychain-probe';

export interface KeyringClientOptions {
  service: string;
  timeoutMs?: number;
  /** Whose D-Bus session bus to check; one other than this process's (the library's only) is unavailable. */
  env?: Record<string, string | undefined>;
  /** Told what loading the library had to say: the single executable's cache directory tightened, or refused. */
  warn?: (msg: string) => void;
  /** The clock of the timeout; the machine's by default. */
  clock?: Clock | undefined;
}

export interface KeyringBackend {
  /** Resolves when the keychain can be used; otherwise rejects with the reason (exit 2). Cheap to repeat. */
  ready(): Promise<void>;
  /** Like ready(), but looks again now: a keyring can be locked, or its collection removed, while a run waits. */
  writable(): Promise<void>;
  get(account: string): Promise<Buffer | null>;
  set(account: string, value: Buffer): Promise<void>;
  delete(account: string): Promise<boolean>;
  list(): Promise<string[]>;
  close(): void;
}

export class KeyringClient implements KeyringBackend {
  readonly service: string;
  readonly timeoutMs: number;
  readonly #env: Record<string, string | undefined>;
  readonly #warn: (msg: string) => void;
  readonly #clock: Clock;
  #ready: Promise<KeyringModule> | null = null;
  /** One entry per account: on Linux, constructing one costs a D-Bus connection and a key exchange. */
  readonly #entries = new Map<string, AsyncEntry>();
  /** Set once the keychain failed in a way that makes further calls pointless (a timeout, no Secret Service). */
  #broken: IdcliError | null = null;

  constructor(opts: KeyringClientOptions) {
    this.service = opts.service;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_KEYCHAIN_TIMEOUT_MS;
    this.#env = opts.env ?? process.env;
    this.#warn = opts.warn ?? (() => {});
    this.#clock = opts.clock ?? systemClock;
  }

  async ready(): Promise<void> {
    await this.#library();
  }

  async writable(): Promise<void> {
    const unusable = await this.#checkNow();
    if (unusable) throw unusable;
  }

  async get(account: string): Promise<Buffer | null> {
    const secret = await this.#onEntry(account, (entry) => entry.getSecret());
    return secret === null ? null : Buffer.from(secret);
  }

  async set(account: string, value: Buffer): Promise<void> {
    // Bytes, not a password: on Windows a password is stored as UTF-16 and would halve the 2560-byte limit.
    await this.#onEntry(account, (entry) => entry.setSecret(value));
  }

  async delete(account: string): Promise<boolean> {
    return (await this.#onEntry(account, (entry) => entry.deleteCredential())) === true;
  }

  async list(): Promise<string[]> {
    const found = await this.#onceMore(async () =>
      this.#guard((await this.#library()).findCredentialsAsync(this.service)),
    );
    return found.map((c) => c.account).filter((a): a is string => typeof a === 'string');
  }

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
      const check = await checkSecretService({ env: this.#env, timeoutMs: this.timeoutMs, clock: this.#clock });
      if (check.status === 'unavailable') throw keychainError(check.reason);
      if (sessionBusOf(this.#env) !== sessionBusOf(process.env)) {
        throw keychainError(
          "the D-Bus session asked for is not this process's own, the only one the keychain library uses",
        );
      }
      if (check.status === 'ready') return await loadKeyring(this.#warn);
    }
    // Nothing checked (another OS, or a bus the check does not speak): a real read tells, e.g. over SSH on macOS.
    const lib = await loadKeyring(this.#warn);
    await this.#guard(this.#construct(lib, PROBE_ACCOUNT).getSecret());
    return lib;
  }

  /** One call on the account's entry, made once more on a new entry if the Secret Service was started again. */
  async #onEntry<T>(account: string, call: (entry: AsyncEntry) => Promise<T>): Promise<T> {
    let entry: AsyncEntry | undefined;
    return this.#onceMore(
      async () => this.#guard(call((entry = await this.#entry(account)))),
      () => {
        if (this.#entries.get(account) === entry) this.#entries.delete(account);
      },
    );
  }

  /**
   * A Secret Service started again since the call's entry was made (systemd or D-Bus does so after gnome-keyring
   * crashes) knows neither its session nor its connection: the call fails, without effect or with the same effect as
   * once more, so it is made once more after `forget` and a new check. A check that fails then marks the keychain
   * broken, as the first check does: a new entry would block without limit on a daemon that does not answer.
   */
  async #onceMore<T>(call: () => Promise<T>, forget: () => void = () => {}): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (!restarted(err)) throw err;
      forget();
      const unusable = await this.#checkNow();
      if (unusable) throw this.#fail(unusable);
      return await call();
    }
  }

  /**
   * The Secret Service checked now, on Linux (elsewhere a locked keychain prompts, within the timeout): why it
   * cannot be used, or null.
   */
  async #checkNow(): Promise<IdcliError | null> {
    await this.#library();
    if (process.platform !== 'linux') return null;
    const check = await checkSecretService({ env: this.#env, timeoutMs: this.timeoutMs, clock: this.#clock });
    return check.status === 'unavailable' ? keychainError(check.reason) : null;
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
      const timer = this.#clock.setTimeout(timeout, this.timeoutMs);
      call.then(resolve, (err: unknown) => reject(libraryError(err))).finally(() => timer.clear());
    });
  }

  /** A keychain that timed out or cannot connect will not recover within this run: later calls fail at once. */
  #fail(err: IdcliError): IdcliError {
    this.#broken ??= err;
    return err;
  }
}

async function loadKeyring(warn: (msg: string) => void): Promise<KeyringModule> {
  let lib: KeyringModule & { notices?: readonly string[] };
  try {
    // Outside the bundle (native); a missing prebuilt binary for this machine fails here, meaning "no keychain".
    lib = await import('@napi-rs/keyring');
  } catch (err) {
    // The single executable's cache directory refused by the private-path rule (src/exe/keyring.ts): the user can
    // fix that, so it is said, where a fallback alone would leave a sign-in in the keychain unexplained.
    if (err instanceof IdcliError) warn(`the keychain is not used: ${err.message}${err.hint ? `; ${err.hint}` : ''}`);
    throw keychainError(`cannot load @napi-rs/keyring (${firstLine(errMessage(err))})`);
  }
  for (const notice of lib.notices ?? []) warn(notice);
  return lib;
}

/** Keychain trouble is a configuration problem of this machine (exit 2). */
export function keychainError(message: string): IdcliError {
  return usageError('KEYCHAIN_UNAVAILABLE', message, 'set IDCLI_CREDENTIAL_STORE=file to use the file store');
}

/**
 * What the library says when the Secret Service it talked to is gone: a session the new daemon never opened
 * (gnome-keyring's "The session does not exist", "The session wrapping the secret does not exist"), or a call
 * whose daemon left the bus before it answered.
 */
const RESTARTED = /The session (wrapping the secret )?does not exist|disconnected from message bus without replying/;

function restarted(err: unknown): boolean {
  return err instanceof IdcliError && err.code === 'KEYCHAIN_UNAVAILABLE' && RESTARTED.test(err.message);
}

function libraryError(err: unknown): IdcliError {
  const message = firstLine(errMessage(err));
  // libdbus's NoReply message goes on to list every possible cause; the gist is enough.
  if (message.includes('Did not receive a reply')) return keychainError('the Secret Service did not answer in time');
  return keychainError(message);
}

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/**
 * The OS keychain through @napi-rs/keyring, called in this process.
 *
 * A helper process per run cost 40-80 ms, most of a cached `idcli token`. In process, the price is that a library
 * call, once started, cannot be abandoned:
 * - On Linux, constructing an entry connects to the D-Bus session bus and opens a Secret Service session,
 *   synchronously, on the main thread. A bus that accepts the connection and never answers blocks it forever; one
 *   that authenticates but ignores Hello, for libdbus's default 25 s; a stalled Secret Service, for the library's
 *   2 s call timeout. No timer can fire meanwhile.
 * - getSecret/setSecret/deleteCredential/findCredentialsAsync run on libuv's thread pool. Their promises can be
 *   given up on, but process.exit() joins the pool's threads (Node calls uv_library_shutdown()), so the process
 *   cannot end before a stuck call returns. An entry's method call returns within the library's 2 s timeout; an
 *   unlock or create-collection prompt does not: the library waits up to a year for the prompt's Completed signal.
 *   findCredentialsAsync goes through another D-Bus stack (zbus) that waits for a stalled service with no timeout.
 * Hence, on Linux, before the first entry exists, {@link probeSecretService} speaks D-Bus itself under the store's
 * timeout: it authenticates, says Hello, and asks for idcli's items (a locked one would prompt) and for the default collection (a missing or locked one would prompt on the first write). Only
 * after clean answers does the library connect. Reads and listing go on directly: the library's listing is
 * unguardable, and its entries cost a D-Bus connection and a key exchange each on the main thread (~6 ms), while a
 * cached `idcli token` then never loads the library at all (~4 ms).
 * What remains is a race: the bus or the service stalling, or the keyring being locked, in the milliseconds
 * between the probe and the library's own calls — the former delays exit by up to 2 s, the latter until the
 * prompt is answered. A bus reached in a way the probe does not speak (tcp:, unixexec:, an authentication other
 * than EXTERNAL) goes unprobed; so do macOS and Windows, where a keychain dialog likewise holds the call.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ExitCode, IdcliError } from '../errors.js';
import { sessionBusOf } from './dbus.js';
import {
  keychainTimeoutReason,
  listSecretServiceAccounts,
  probeSecretService,
  readSecretServiceSecret,
} from './secret-service.js';

type KeyringModule = typeof import('@napi-rs/keyring');
type AsyncEntry = InstanceType<KeyringModule['AsyncEntry']>;

export const DEFAULT_KEYCHAIN_TIMEOUT_MS = 3000;

// Linux entries are pinned to the Secret Service, because the library's default falls back to the kernel keyring,
// which forgets everything at logout/reboot — a silent data loss that must instead surface as "keychain
// unavailable" so `auto` announces the file store.
const ENTRY_OPTIONS = { linux: { store: 'secret-service' as const } };
/** Read where no D-Bus probe tells whether the keychain works; normally it does not exist. */
const PROBE_ACCOUNT = 'idcli-keychain-probe';

export interface KeyringClientOptions {
  service: string;
  timeoutMs?: number;
  /**
   * Environment whose D-Bus session bus the probe checks; defaults to this process's. The library only ever uses
   * this process's own environment, so a different session bus is reported as unavailable rather than half used.
   */
  env?: Record<string, string | undefined>;
}

/** Raw byte access to entries of one keychain service. */
export interface KeyringBackend {
  /** Resolves when the keychain can be used; otherwise rejects with the reason (exit 2). Cheap to repeat. */
  ready(): Promise<void>;
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
  /** Settles once the keychain is known to be usable for reading (see #prepare). */
  #ready: Promise<void> | null = null;
  #library: KeyringModule | null = null;
  /** The probe spoke to the Secret Service itself, so listing can too (the library's listing has no timeout). */
  #direct = false;
  /** Settles once writing cannot make the library prompt: the probe's checks of the default collection passed. */
  #writable: Promise<void> | null = null;
  /** One entry per account: constructing one costs a D-Bus connection and a key exchange on Linux (~6 ms). */
  readonly #entries = new Map<string, AsyncEntry>();
  /** Set once the keychain failed in a way that makes further calls pointless (a timeout, no Secret Service). */
  #broken: IdcliError | null = null;

  constructor(opts: KeyringClientOptions) {
    this.service = opts.service;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_KEYCHAIN_TIMEOUT_MS;
    this.#env = opts.env ?? process.env;
  }

  ready(): Promise<void> {
    if (this.#broken) return Promise.reject(this.#broken);
    this.#ready ??= this.#prepare();
    return this.#ready;
  }

  /**
   * On Linux, once the probe found the Secret Service healthy, reads go to it directly over D-Bus (see the top of
   * this file). Writes, deletes and everything elsewhere go through the library.
   */
  async get(account: string): Promise<Buffer | null> {
    await this.ready();
    if (this.#direct) {
      const read = await readSecretServiceSecret({
        env: this.#env,
        service: this.service,
        account,
        timeoutMs: this.timeoutMs,
      });
      if (read.status === 'unavailable') throw this.#fail(keychainError(read.reason));
      if (read.status === 'done' && read.secret !== 'ambiguous') return read.secret;
      // Several items for the account, or a bus spoken to otherwise than the probe's: the library decides.
    }
    const secret = await this.#guard((await this.#entry(account)).getSecret());
    return secret === null ? null : Buffer.from(secret);
  }

  async set(account: string, value: Buffer): Promise<void> {
    await this.#checkWritable();
    // Bytes, not a password: on Windows a password is stored as UTF-16 and would halve the 2560-byte limit.
    await this.#guard((await this.#entry(account)).setSecret(value));
  }

  async delete(account: string): Promise<boolean> {
    await this.#checkWritable();
    return (await this.#guard((await this.#entry(account)).deleteCredential())) === true;
  }

  async list(): Promise<string[]> {
    await this.ready();
    if (this.#direct) {
      const listed = await listSecretServiceAccounts({
        env: this.#env,
        service: this.service,
        timeoutMs: this.timeoutMs,
      });
      if (Array.isArray(listed)) return listed;
      if (listed.status === 'unavailable') throw this.#fail(keychainError(listed.reason));
    }
    // Other systems, or a bus the probe could not speak to: the library lists.
    const found = await this.#guard(this.#loaded().findCredentialsAsync(this.service));
    return found.map((c) => c.account).filter((a): a is string => typeof a === 'string');
  }

  /** Drops the entries and their D-Bus connections; a later call reconnects. */
  close(): void {
    this.#entries.clear();
  }

  /**
   * On Linux, the probe (see the top of this file). When it reads the first account and finds it, that settles
   * readiness; otherwise it also checks what a write needs, so that `auto` picks the keychain only where a sign-in
   * can be stored. The library is loaded only where the probe does not vouch for the keychain, or when its binary
   * cannot be seen (then loading it tells why there is no keychain); otherwise on the first call that needs it.
   */
  async #prepare(): Promise<void> {
    if (process.platform === 'linux') {
      const probe = await probeSecretService({
        env: this.#env,
        service: this.service,
        timeoutMs: this.timeoutMs,
      });
      if (probe.status === 'unavailable') throw this.#fail(keychainError(probe.reason));
      if (sessionBusOf(this.#env) !== sessionBusOf(process.env)) {
        throw this.#fail(
          keychainError(
            "the D-Bus session asked for is not this process's own, the only one the keychain library uses",
          ),
        );
      }
      if (probe.status === 'ready') {
        if (!bindingInstalled()) this.#loaded();
        this.#direct = true;
        if (probe.writable) this.#writable = Promise.resolve();
        return;
      }
    }
    // Nothing probed (another OS, or a bus transport the probe does not speak): a real read tells, e.g. a macOS
    // keychain that cannot show its dialog in an SSH session. What it could not tell, nothing here can.
    this.#writable = Promise.resolve();
    const entry = this.#construct(this.#loaded(), PROBE_ACCOUNT);
    await this.#guard(entry.getSecret());
  }

  /** Before the first write: the probe's checks that reading an account found in the keychain did not need. */
  async #checkWritable(): Promise<void> {
    await this.ready();
    this.#writable ??= probeSecretService({ env: this.#env, service: this.service, timeoutMs: this.timeoutMs }).then(
      (probe) => {
        if (probe.status === 'unavailable') throw this.#fail(keychainError(probe.reason));
      },
    );
    await this.#writable;
  }

  /** The library, loaded on first use; a failure marks the keychain broken for the rest of the run. */
  #loaded(): KeyringModule {
    if (this.#broken) throw this.#broken;
    try {
      this.#library ??= loadKeyring();
    } catch (err) {
      throw this.#fail(err as IdcliError);
    }
    return this.#library;
  }

  async #entry(account: string): Promise<AsyncEntry> {
    await this.ready();
    const lib = this.#loaded();
    let entry = this.#entries.get(account);
    if (!entry) {
      entry = this.#construct(lib, account);
      this.#entries.set(account, entry);
    }
    return entry;
  }

  /** Synchronous and unguardable on Linux (see the top of this file): only ever called after a clean probe. */
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
      const timer = setTimeout(() => {
        reject(this.#fail(keychainError(keychainTimeoutReason(this.timeoutMs))));
      }, this.timeoutMs);
      call.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(libraryError(err));
        },
      );
    });
  }

  /** A keychain that timed out or cannot connect will not recover within this run: later calls fail at once. */
  #fail(err: IdcliError): IdcliError {
    this.#broken ??= err;
    return err;
  }
}

/**
 * Whether the library's native binary for Linux on this machine is installed, without loading it: loading costs
 * ~4 ms that a direct read does not need. It is looked for as Node's resolution would find the library's
 * platform package (@napi-rs/keyring-linux-<arch>-<abi>, a main file named after it) from here: in the
 * node_modules of every folder up from this one. Resolving through node:module costs ~2 ms more. The Linux binaries
 * link nothing but the C library, and npm installs only the package built for this machine's (glibc or musl), so a
 * binary that is there loads. Not seeing it only means loading the library to find out.
 */
function bindingInstalled(): boolean {
  // The library's own override of where the binary is: only loading it tells.
  if (process.env.NAPI_RS_NATIVE_LIBRARY_PATH) return false;
  const triples = ['gnu', 'musl', 'gnueabihf', 'musleabihf'].map((abi) => `linux-${process.arch}-${abi}`);
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    for (const triple of triples) {
      if (existsSync(join(dir, 'node_modules', '@napi-rs', `keyring-${triple}`, `keyring.${triple}.node`))) return true;
    }
    if (dirname(dir) === dir) return false;
  }
}

function loadKeyring(): KeyringModule {
  try {
    // createRequire: the binding is CommonJS with a native part, and stays outside the bundle. A missing optional
    // platform package (no prebuilt binary for this machine) fails here, which just means "no keychain".
    return createRequire(import.meta.url)('@napi-rs/keyring') as KeyringModule;
  } catch (err) {
    throw keychainError(`cannot load @napi-rs/keyring (${firstLine(messageOf(err))})`);
  }
}

/** Keychain trouble is a configuration problem of this machine (exit 2), the same class as "keychain demanded but unavailable". */
export function keychainError(message: string): IdcliError {
  return new IdcliError(message, ExitCode.USAGE, { hint: 'set IDCLI_CREDENTIAL_STORE=file to use the file store' });
}

function libraryError(err: unknown): IdcliError {
  const message = firstLine(messageOf(err));
  // libdbus's NoReply message goes on to list every possible cause; the gist is enough.
  if (message.includes('Did not receive a reply')) return keychainError('the Secret Service did not answer in time');
  return keychainError(message);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

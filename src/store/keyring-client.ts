/**
 * The OS keychain through @napi-rs/keyring, called in this process.
 *
 * A helper process per run cost 40-80 ms, most of a cached `idcli token`; in process the whole read costs ~15 ms
 * (loading the binding ~5, the probe below ~3, an entry ~5, the read ~1). The price is that a library call, once
 * started, cannot be abandoned:
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
 * timeout: it authenticates, says Hello, and asks the Secret Service for idcli's items (a locked one would prompt)
 * and for the default collection (a missing or locked one would prompt on the first write). Only after clean
 * answers does the library connect. Listing, rare (logout) and unguardable in the library, is done directly too.
 * What remains is a race: the bus or the service stalling, or the keyring being locked, in the milliseconds
 * between the probe and the library's own calls — the former delays exit by up to 2 s, the latter until the
 * prompt is answered. A bus reached in a way the probe does not speak (tcp:, unixexec:, an authentication other
 * than EXTERNAL) goes unprobed; so do macOS and Windows, where a keychain dialog likewise holds the call.
 */
import { createRequire } from 'node:module';
import { createConnection, type Socket } from 'node:net';
import { ExitCode, IdcliError } from '../errors.js';

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
  #library: Promise<KeyringModule> | null = null;
  /** The probe spoke to the Secret Service itself, so listing can too (the library's listing has no timeout). */
  #direct = false;
  /** One entry per account: constructing one costs a D-Bus connection and a key exchange on Linux (~6 ms). */
  readonly #entries = new Map<string, AsyncEntry>();
  /** Set once the keychain failed in a way that makes further calls pointless (a timeout, no Secret Service). */
  #broken: IdcliError | null = null;

  constructor(opts: KeyringClientOptions) {
    this.service = opts.service;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_KEYCHAIN_TIMEOUT_MS;
    this.#env = opts.env ?? process.env;
  }

  async ready(): Promise<void> {
    await this.#prepared();
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
    const lib = await this.#prepared();
    if (this.#direct) {
      const listed = await listSecretServiceAccounts({ env: this.#env, service: this.service, timeoutMs: this.timeoutMs });
      if (Array.isArray(listed)) return listed;
      if (listed.status === 'unavailable') throw this.#fail(keychainError(listed.reason));
    }
    // Other systems, or a bus the probe could not speak to: the library lists.
    const found = await this.#guard(lib.findCredentialsAsync(this.service));
    return found.map((c) => c.account).filter((a): a is string => typeof a === 'string');
  }

  /** Drops the entries and their D-Bus connections; a later call reconnects. */
  close(): void {
    this.#entries.clear();
  }

  #prepared(): Promise<KeyringModule> {
    if (this.#broken) return Promise.reject(this.#broken);
    this.#library ??= this.#prepare();
    return this.#library;
  }

  async #prepare(): Promise<KeyringModule> {
    const lib = loadKeyring();
    if (process.platform === 'linux') {
      const probe = await probeSecretService({ env: this.#env, service: this.service, timeoutMs: this.timeoutMs });
      if (probe.status === 'unavailable') throw this.#fail(keychainError(probe.reason));
      if (sessionBusOf(this.#env) !== sessionBusOf(process.env)) {
        throw this.#fail(keychainError('the D-Bus session asked for is not this process\'s own, the only one the keychain library uses'));
      }
      if (probe.status === 'ready') {
        this.#direct = true;
        return lib;
      }
    }
    // Nothing probed (another OS, or a bus transport the probe does not speak): a real read tells, e.g. a macOS
    // keychain that cannot show its dialog in an SSH session.
    const entry = this.#construct(lib, PROBE_ACCOUNT);
    await this.#guard(entry.getSecret());
    return lib;
  }

  async #entry(account: string): Promise<AsyncEntry> {
    const lib = await this.#prepared();
    if (this.#broken) throw this.#broken;
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
        reject(this.#fail(keychainError(`keychain did not answer within ${formatSeconds(this.timeoutMs)}`)));
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

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

// ---------------------------------------------------------------------------------------------------------------
// The Secret Service spoken to directly over D-Bus, where a call must be abandonable: a socket of our own can be
// destroyed at any time. References: the D-Bus specification (https://dbus.freedesktop.org/doc/dbus-specification.html)
// and the Secret Service API (https://specifications.freedesktop.org/secret-service-spec/latest/).

/** A Unix socket to try, or null for a transport not spoken here (tcp:, unixexec:, launchd:, …). */
export type BusEndpoint = { path: string; display: string } | null;

export type ProbeResult = { status: 'ready' } | { status: 'unavailable'; reason: string } | { status: 'unchecked' };

/**
 * Where libdbus would connect, in order ("Server Addresses": `;`-separated `transport:key=value,…`, values
 * %-escaped). Without DBUS_SESSION_BUS_ADDRESS it uses $XDG_RUNTIME_DIR/bus; an empty list means no bus at all.
 */
export function sessionBusEndpoints(env: Record<string, string | undefined>): BusEndpoint[] {
  const address = env.DBUS_SESSION_BUS_ADDRESS;
  if (!address) {
    const runtime = env.XDG_RUNTIME_DIR;
    return runtime ? [{ path: `${runtime}/bus`, display: `${runtime}/bus` }] : [];
  }
  return address
    .split(';')
    .filter((entry) => entry.length > 0)
    .map((entry) => {
      const colon = entry.indexOf(':');
      if (colon < 0 || entry.slice(0, colon) !== 'unix') return null;
      const params = new Map<string, string>();
      for (const pair of entry.slice(colon + 1).split(',')) {
        const eq = pair.indexOf('=');
        if (eq > 0) params.set(pair.slice(0, eq), unescapeAddressValue(pair.slice(eq + 1)));
      }
      const path = params.get('path');
      if (path) return { path, display: path };
      // Linux abstract sockets: a leading NUL byte in the name, which Node passes through to connect().
      const abstract = params.get('abstract');
      if (abstract) return { path: `\0${abstract}`, display: `@${abstract}` };
      return null;
    });
}

function unescapeAddressValue(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function sessionBusOf(env: Record<string, string | undefined>): string {
  return env.DBUS_SESSION_BUS_ADDRESS || `runtime:${env.XDG_RUNTIME_DIR ?? ''}`;
}

const BUS: Target = { destination: 'org.freedesktop.DBus', path: '/org/freedesktop/DBus', interface: 'org.freedesktop.DBus' };
const SECRETS: Target = { destination: 'org.freedesktop.secrets', path: '/org/freedesktop/secrets', interface: 'org.freedesktop.Secret.Service' };
const LOCKED = 'the keyring is locked (unlock it, e.g. by signing in to the desktop)';

interface BusOptions {
  env: Record<string, string | undefined>;
  timeoutMs: number;
}

/**
 * Whether the Secret Service on the session bus in `env` can be used without the library blocking or prompting:
 * `ready`; `unavailable` with a reason for the user; or `unchecked` when the bus is reached in a way not spoken
 * here (another transport, another authentication mechanism), which leaves the verdict to the library.
 */
export async function probeSecretService(opts: BusOptions & { service: string }): Promise<ProbeResult> {
  const outcome = await withSessionBus(opts, async (bus) => {
    // Service.SearchItems → (ao unlocked, ao locked): a locked item of ours would make the library Unlock it through
    // a prompt. Service.ReadAlias → o, "/" when there is none: the first write would prompt to create a collection.
    const search = bus.call(SECRETS, 'SearchItems', 'a{ss}', (m) => m.array(8, () => m.dictEntry('service', opts.service)));
    const alias = bus.call(SECRETS, 'ReadAlias', 's', (m) => m.string('default'));
    const found = await search;
    found.objectPaths(); // the unlocked ones
    if (found.objectPaths().length > 0) throw new Unusable(LOCKED);
    const collection = (await alias).string();
    if (collection === '/') throw new Unusable('the keyring has no default collection');
    // A locked default collection would prompt on the first write. BOOLEAN is marshalled as a UINT32 0 or 1.
    const locked = await bus.getProperty({ ...SECRETS, path: collection }, 'org.freedesktop.Secret.Collection', 'Locked');
    if (locked.signature() !== 'b') throw new Unusable('the Secret Service answered an unexpected Locked property');
    if (locked.u32() !== 0) throw new Unusable(LOCKED);
  });
  return outcome.status === 'done' ? { status: 'ready' } : outcome;
}

/** Names of the accounts stored under `service`, from the items' attributes (service, username: see the library). */
export async function listSecretServiceAccounts(opts: BusOptions & { service: string }): Promise<string[] | ProbeResult> {
  const outcome = await withSessionBus(opts, async (bus) => {
    const found = await bus.call(SECRETS, 'SearchItems', 'a{ss}', (m) => m.array(8, () => m.dictEntry('service', opts.service)));
    const unlocked = found.objectPaths();
    const paths = [...unlocked, ...found.objectPaths()];
    const attributes = await Promise.all(paths.map((path) => bus.getProperty({ ...SECRETS, path }, 'org.freedesktop.Secret.Item', 'Attributes')));
    const accounts: string[] = [];
    for (const value of attributes) {
      const username = value.signature() === 'a{ss}' ? value.stringDict().get('username') : undefined;
      if (username !== undefined) accounts.push(username);
    }
    return accounts;
  });
  return outcome.status === 'done' ? outcome.value : outcome;
}

/** A reason the Secret Service cannot be used, worded for the user; never carries a secret. */
class Unusable extends Error {}
/** The endpoint refused the connection: libdbus would go on to the next address. */
class Unreachable extends Error {}
/** The bus answered AUTH EXTERNAL with something other than OK. */
class NotExternal extends Error {}

type Outcome<T> = { status: 'done'; value: T } | { status: 'unavailable'; reason: string } | { status: 'unchecked' };

/** Opens the session bus, runs `talk` on it, and closes it, all within `timeoutMs`. */
async function withSessionBus<T>(opts: BusOptions, talk: (bus: SessionBus) => Promise<T>): Promise<Outcome<T>> {
  const endpoints = sessionBusEndpoints(opts.env);
  if (endpoints.length === 0) return { status: 'unavailable', reason: 'no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)' };
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), opts.timeoutMs);
  let unreachable = '';
  try {
    // libdbus tries the addresses in order and uses the first it can connect to.
    for (const endpoint of endpoints) {
      if (endpoint === null) return { status: 'unchecked' };
      const bus = SessionBus.open(endpoint, deadline.signal);
      try {
        // Hello must be the first message ("Message Bus Specification"); later calls need not wait for its reply.
        const hello = bus.call(BUS, 'Hello');
        const value = await talk(bus);
        await hello;
        return { status: 'done', value };
      } catch (err) {
        if (!(err instanceof Unreachable)) throw err;
        unreachable = err.message;
      } finally {
        bus.close();
      }
    }
    return { status: 'unavailable', reason: unreachable };
  } catch (err) {
    if (deadline.signal.aborted) return { status: 'unavailable', reason: `keychain did not answer within ${formatSeconds(opts.timeoutMs)}` };
    // The bus is alive but wants another authentication mechanism: that, and the rest, is the library's business.
    if (err instanceof NotExternal) return { status: 'unchecked' };
    if (err instanceof Unusable) return { status: 'unavailable', reason: err.message };
    // A reply shorter than its own signature says, met while reading its body.
    if (err instanceof RangeError) return { status: 'unavailable', reason: 'the D-Bus session bus sent a malformed message' };
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

interface Target {
  destination: string;
  path: string;
  interface: string;
}

interface Pending {
  to: Target;
  member: string;
  resolve(body: Unmarshal): void;
  reject(err: Error): void;
}

/** One authenticated connection to the session bus, with method calls as promises. */
class SessionBus {
  readonly #socket: Socket;
  readonly #signal: AbortSignal;
  readonly #pending = new Map<number, Pending>();
  #buffered = Buffer.alloc(0);
  #serial = 0;
  #connected = false;
  #authenticated = false;
  #failure: Error | null = null;
  readonly #onAbort = () => this.#fail(new Unusable('timed out'));

  private constructor(socket: Socket, signal: AbortSignal) {
    this.#socket = socket;
    this.#signal = signal;
  }

  /**
   * Starts connecting and authenticating; calls can be made at once. Everything goes out in one flight when the
   * connection is up — AUTH, BEGIN and the calls — without waiting for the bus's OK, as sd-bus does: one round trip
   * instead of two. If the bus does not accept EXTERNAL, every call fails with {@link NotExternal}.
   */
  static open(endpoint: NonNullable<BusEndpoint>, signal: AbortSignal): SessionBus {
    const bus = new SessionBus(createConnection({ path: endpoint.path }), signal);
    bus.#start(endpoint.display);
    return bus;
  }

  #start(display: string): void {
    const socket = this.#socket;
    if (this.#signal.aborted) this.#onAbort();
    this.#signal.addEventListener('abort', this.#onAbort, { once: true });
    // "Authentication Protocol": a NUL byte, then AUTH EXTERNAL with the uid as ASCII digits, hex-encoded; BEGIN
    // ends the exchange. Written before the socket is connected, Node sends it first when it is.
    const uid = Buffer.from(String(process.getuid?.() ?? 0), 'ascii').toString('hex');
    socket.write(`\0AUTH EXTERNAL ${uid}\r\nBEGIN\r\n`, 'latin1');
    socket.on('connect', () => {
      this.#connected = true;
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? err.message;
      this.#fail(
        this.#connected ? new Unusable(`lost the D-Bus session bus (${code})`) : new Unreachable(`cannot connect to the D-Bus session bus at ${display} (${code})`),
      );
    });
    socket.on('close', () => this.#fail(new Unusable('the D-Bus session bus closed the connection')));
    socket.on('data', (chunk: Buffer) => {
      this.#buffered = Buffer.concat([this.#buffered, chunk]);
      try {
        this.#receive();
      } catch {
        this.#fail(new Unusable('the D-Bus session bus sent a malformed message'));
      }
    });
  }

  call(to: Target, member: string, signature = '', body?: (m: Marshal) => void): Promise<Unmarshal> {
    const failure = this.#failure;
    const serial = ++this.#serial;
    const reply = new Promise<Unmarshal>((resolve, reject) => {
      if (failure) return reject(failure);
      this.#pending.set(serial, { to, member, resolve, reject });
      this.#socket.write(methodCall(serial, to, member, signature, body));
    });
    // Calls are pipelined, and a verdict may come before every reply: those left over are rejected when the
    // connection closes, which must not count as an unhandled rejection. Awaiting one still sees its error.
    reply.catch(() => {});
    return reply;
  }

  /** Properties.Get → VARIANT: the reader is left at the variant's signature. */
  getProperty(object: Target, iface: string, name: string): Promise<Unmarshal> {
    return this.call({ ...object, interface: 'org.freedesktop.DBus.Properties' }, 'Get', 'ss', (m) => {
      m.string(iface);
      m.string(name);
    });
  }

  close(): void {
    this.#fail(new Unusable('closed'));
  }

  #receive(): void {
    if (!this.#authenticated) {
      const end = this.#buffered.indexOf('\r\n');
      if (end < 0) return;
      const line = this.#buffered.subarray(0, end).toString('latin1');
      this.#buffered = this.#buffered.subarray(end + 2);
      // REJECTED lists the mechanisms the bus would take; the pipelined BEGIN and calls are void then.
      if (!line.startsWith('OK ')) {
        this.#fail(new NotExternal(line));
        return;
      }
      this.#authenticated = true;
    }
    for (;;) {
      const size = messageSize(this.#buffered);
      if (size === null || this.#buffered.length < size) return;
      const reply = parseReply(this.#buffered.subarray(0, size));
      this.#buffered = this.#buffered.subarray(size);
      const pending = reply ? this.#pending.get(reply.replySerial) : undefined;
      if (!reply || !pending) continue; // signals (NameAcquired after Hello), or not ours
      this.#pending.delete(reply.replySerial);
      if (reply.errorName === null) pending.resolve(reply.body);
      else pending.reject(new Unusable(describeError(pending, reply)));
    }
  }

  #fail(err: Error): void {
    if (this.#failure) return;
    this.#failure = err;
    this.#signal.removeEventListener('abort', this.#onAbort);
    this.#socket.destroy();
    for (const pending of this.#pending.values()) pending.reject(err);
    this.#pending.clear();
  }
}

function describeError(call: Pending, reply: Reply): string {
  const name = reply.errorName ?? 'an unnamed error';
  if (call.to.destination === BUS.destination) return `the D-Bus session bus refused ${call.member} (${name})`;
  // Errors the bus sends in the service's stead (ServiceUnknown, a failed activation) mean nobody serves it.
  if (reply.sender === BUS.destination) return `no Secret Service on the D-Bus session bus (${name})`;
  return `the Secret Service failed (${name})`;
}

// "Message Format": the header's message types and field codes.
const METHOD_CALL = 1;
const METHOD_RETURN = 2;
const ERROR = 3;
const FIELD_PATH = 1;
const FIELD_INTERFACE = 2;
const FIELD_MEMBER = 3;
const FIELD_ERROR_NAME = 4;
const FIELD_REPLY_SERIAL = 5;
const FIELD_DESTINATION = 6;
const FIELD_SENDER = 7;
const FIELD_SIGNATURE = 8;

function methodCall(serial: number, to: Target, member: string, signature: string, body?: (m: Marshal) => void): Buffer {
  const payload = new Marshal();
  body?.(payload);
  const m = new Marshal();
  // Fixed header: endianness 'l', type, flags, protocol version 1, body length, serial.
  m.byte(0x6c);
  m.byte(METHOD_CALL);
  m.byte(0);
  m.byte(1);
  m.u32(payload.length);
  m.u32(serial);
  // Header fields: ARRAY of STRUCT(BYTE code, VARIANT value); structs align to 8.
  m.array(8, () => {
    m.field(FIELD_PATH, 'o', () => m.string(to.path));
    m.field(FIELD_INTERFACE, 's', () => m.string(to.interface));
    m.field(FIELD_MEMBER, 's', () => m.string(member));
    m.field(FIELD_DESTINATION, 's', () => m.string(to.destination));
    if (signature) m.field(FIELD_SIGNATURE, 'g', () => m.signature(signature));
  });
  // The body starts on an 8-byte boundary, so alignment within it is the same as from the message start.
  m.pad(8);
  return Buffer.concat([m.bytes(), payload.bytes()]);
}

/** Length of the message at the start of `buf` once its fixed header is in, else null. */
function messageSize(buf: Buffer): number | null {
  if (buf.length < 16) return null;
  const le = buf[0] === 0x6c;
  const bodyLength = le ? buf.readUInt32LE(4) : buf.readUInt32BE(4);
  const fieldsLength = le ? buf.readUInt32LE(12) : buf.readUInt32BE(12);
  return alignUp(16 + fieldsLength, 8) + bodyLength;
}

interface Reply {
  replySerial: number;
  errorName: string | null;
  sender: string;
  /** Positioned at the start of the body. */
  body: Unmarshal;
}

/** A METHOD_RETURN or ERROR; null for anything else (e.g. the NameAcquired signal after Hello). */
function parseReply(msg: Buffer): Reply | null {
  const type = msg[1];
  if (type !== METHOD_RETURN && type !== ERROR) return null;
  const r = new Unmarshal(msg, msg[0] === 0x6c, 12);
  const end = 16 + r.u32();
  const reply: Reply = { replySerial: 0, errorName: type === ERROR ? 'an unnamed error' : null, sender: '', body: r };
  while (r.pos < end) {
    r.pad(8);
    const code = r.byte();
    const kind = r.signature();
    const value = kind === 'u' ? r.u32() : kind === 'g' ? r.signature() : r.string();
    if (code === FIELD_REPLY_SERIAL) reply.replySerial = Number(value);
    else if (code === FIELD_ERROR_NAME && type === ERROR) reply.errorName = String(value);
    else if (code === FIELD_SENDER) reply.sender = String(value);
  }
  r.pad(8);
  return reply;
}

function alignUp(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/** Little-endian marshalling of the few types sent here ("Marshaling (Wire Format)"). */
class Marshal {
  readonly #bytes: number[] = [];

  get length(): number {
    return this.#bytes.length;
  }

  pad(to: number): void {
    while (this.#bytes.length % to !== 0) this.#bytes.push(0);
  }

  byte(v: number): void {
    this.#bytes.push(v & 0xff);
  }

  u32(v: number): void {
    this.pad(4);
    this.#bytes.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff);
  }

  /** STRING and OBJECT_PATH: length, UTF-8 bytes, NUL. */
  string(s: string): void {
    const utf8 = Buffer.from(s, 'utf8');
    this.u32(utf8.length);
    this.#bytes.push(...utf8, 0);
  }

  signature(s: string): void {
    this.#bytes.push(s.length, ...Buffer.from(s, 'latin1'), 0);
  }

  /** The length excludes the padding between it and the first element. */
  array(elementAlignment: number, write: () => void): void {
    this.u32(0);
    const at = this.#bytes.length - 4;
    this.pad(elementAlignment);
    const start = this.#bytes.length;
    write();
    const n = this.#bytes.length - start;
    this.#bytes.splice(at, 4, n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff);
  }

  /** DICT_ENTRY<STRING,STRING>: aligned like a struct. */
  dictEntry(key: string, value: string): void {
    this.pad(8);
    this.string(key);
    this.string(value);
  }

  /** A header field: STRUCT(BYTE code, VARIANT). */
  field(code: number, signature: string, write: () => void): void {
    this.pad(8);
    this.byte(code);
    this.signature(signature);
    write();
  }

  bytes(): Buffer {
    return Buffer.from(this.#bytes);
  }
}

/** Reads the types the replies here contain, in either byte order; offsets count from the message start. */
class Unmarshal {
  constructor(
    readonly buf: Buffer,
    readonly littleEndian: boolean,
    public pos: number,
  ) {}

  pad(to: number): void {
    this.pos = alignUp(this.pos, to);
  }

  byte(): number {
    if (this.pos >= this.buf.length) throw new RangeError('truncated message');
    return this.buf[this.pos++]!;
  }

  u32(): number {
    this.pad(4);
    const v = this.littleEndian ? this.buf.readUInt32LE(this.pos) : this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  string(): string {
    const length = this.u32();
    if (this.pos + length >= this.buf.length) throw new RangeError('truncated message');
    const s = this.buf.toString('utf8', this.pos, this.pos + length);
    this.pos += length + 1;
    return s;
  }

  signature(): string {
    const length = this.byte();
    const s = this.buf.toString('latin1', this.pos, this.pos + length);
    this.pos += length + 1;
    return s;
  }

  /** ARRAY of OBJECT_PATH. */
  objectPaths(): string[] {
    const length = this.u32();
    const end = this.pos + length;
    const paths: string[] = [];
    while (this.pos < end) paths.push(this.string());
    return paths;
  }

  /** ARRAY of DICT_ENTRY<STRING,STRING>. */
  stringDict(): Map<string, string> {
    const length = this.u32();
    this.pad(8);
    const end = this.pos + length;
    const dict = new Map<string, string>();
    while (this.pos < end) {
      this.pad(8);
      const key = this.string();
      dict.set(key, this.string());
    }
    return dict;
  }
}

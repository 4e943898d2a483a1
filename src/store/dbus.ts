/**
 * Just enough of D-Bus to ask a service on the session bus a few questions under a deadline: a call must be
 * abandonable, and a socket of our own can be destroyed at any time (libdbus, in the keychain library, cannot be
 * interrupted; see keyring-client.ts). Reference: the D-Bus specification
 * (https://dbus.freedesktop.org/doc/dbus-specification.html); section names are quoted below.
 */
import { createConnection, type Socket } from 'node:net';

/** A Unix socket to try, or null for a transport not spoken here (tcp:, unixexec:, launchd:, …). */
export type BusEndpoint = { path: string; display: string } | null;

/** An object's interface at a bus name: where a method call goes. */
export interface Target {
  destination: string;
  path: string;
  interface: string;
  /** The service as the user knows it, for error messages (e.g. "Secret Service"); defaults to the destination. */
  label?: string;
}

export interface BusOptions {
  env: Record<string, string | undefined>;
  timeoutMs: number;
}

/** What a conversation came to; `unchecked` when the bus is reached in a way not spoken here. */
export type Outcome<T> =
  | { status: 'done'; value: T }
  | {
      status: 'unavailable';
      reason: string;
      /** Set when the service itself answered with an error. */ serviceError?: string;
    }
  | { status: 'unchecked' }
  | { status: 'timed-out' };

/** A reason the bus or a service on it cannot be used, worded for the user; never carries a secret. */
export class Unusable extends Error {}
/** The service (not the bus) answered a call with an error reply: it is alive, the call failed. */
class ServiceError extends Unusable {
  constructor(
    message: string,
    readonly errorName: string,
  ) {
    super(message);
  }
}
/** The endpoint refused the connection: libdbus would go on to the next address. */
class Unreachable extends Error {}
/** The bus answered AUTH EXTERNAL with something other than OK. */
class NotExternal extends Error {}

const BUS: Target = {
  destination: 'org.freedesktop.DBus',
  path: '/org/freedesktop/DBus',
  interface: 'org.freedesktop.DBus',
};

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

/** Which session bus `env` names, comparable between environments. */
export function sessionBusOf(env: Record<string, string | undefined>): string {
  return env.DBUS_SESSION_BUS_ADDRESS || `runtime:${env.XDG_RUNTIME_DIR ?? ''}`;
}

/** Opens the session bus, runs `talk` on it, and closes it, all within `timeoutMs`. */
export async function withSessionBus<T>(opts: BusOptions, talk: (bus: SessionBus) => Promise<T>): Promise<Outcome<T>> {
  const endpoints = sessionBusEndpoints(opts.env);
  if (endpoints.length === 0)
    return { status: 'unavailable', reason: 'no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)' };
  let bus: SessionBus | undefined;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    bus?.abort();
  }, opts.timeoutMs);
  let unreachable = '';
  try {
    // libdbus tries the addresses in order and uses the first it can connect to.
    for (const endpoint of endpoints) {
      if (endpoint === null) return { status: 'unchecked' };
      bus = SessionBus.open(endpoint);
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
    if (timedOut) return { status: 'timed-out' };
    // The bus is alive but wants another authentication mechanism: that, and the rest, is the library's business.
    if (err instanceof NotExternal) return { status: 'unchecked' };
    if (err instanceof ServiceError) return { status: 'unavailable', reason: err.message, serviceError: err.errorName };
    if (err instanceof Unusable) return { status: 'unavailable', reason: err.message };
    // A reply shorter than its own signature says, met while reading its body.
    if (err instanceof RangeError)
      return { status: 'unavailable', reason: 'the D-Bus session bus sent a malformed message' };
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

interface Pending {
  to: Target;
  member: string;
  resolve(body: Unmarshal): void;
  reject(err: Error): void;
}

/** One authenticated connection to the session bus, with method calls as promises. */
export class SessionBus {
  readonly #socket: Socket;
  readonly #pending = new Map<number, Pending>();
  #buffered = Buffer.alloc(0);
  #serial = 0;
  #connected = false;
  #authenticated = false;
  #failure: Error | null = null;
  /** Messages not yet handed to the socket: calls made one after another leave in one write (see #send). */
  #outbox: Buffer[] = [];

  private constructor(socket: Socket) {
    this.#socket = socket;
  }

  /**
   * Starts connecting and authenticating; calls can be made at once. Everything goes out in one flight when the
   * connection is up — AUTH, BEGIN and the calls — without waiting for the bus's OK, as sd-bus does: one round trip
   * instead of two. If the bus does not accept EXTERNAL, every call fails with {@link NotExternal}.
   */
  static open(endpoint: NonNullable<BusEndpoint>): SessionBus {
    const bus = new SessionBus(createConnection({ path: endpoint.path }));
    bus.#start(endpoint.display);
    return bus;
  }

  #start(display: string): void {
    const socket = this.#socket;
    // "Authentication Protocol": a NUL byte, then AUTH EXTERNAL with the uid as ASCII digits, hex-encoded; BEGIN
    // ends the exchange. Written before the socket is connected, Node sends it first when it is.
    const uid = Buffer.from(String(process.getuid?.() ?? 0), 'ascii').toString('hex');
    this.#send(Buffer.from(`\0AUTH EXTERNAL ${uid}\r\nBEGIN\r\n`, 'latin1'));
    socket.on('connect', () => {
      this.#connected = true;
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? err.message;
      this.#fail(
        this.#connected
          ? new Unusable(`lost the D-Bus session bus (${code})`)
          : new Unreachable(`cannot connect to the D-Bus session bus at ${display} (${code})`),
      );
    });
    socket.on('close', () => this.#fail(new Unusable('the D-Bus session bus closed the connection')));
    socket.on('data', (chunk: Buffer) => {
      if (this.#failure) return;
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
      this.#send(methodCall(serial, to, member, signature, body));
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

  /**
   * Queues bytes for the socket; the queue is written once the current synchronous run of calls is over. One write
   * instead of one per call: each costs a pass through the stream machinery and a system call, and the service
   * reads them all at once.
   */
  #send(bytes: Buffer): void {
    if (this.#outbox.push(bytes) > 1) return;
    queueMicrotask(() => {
      const out = this.#outbox;
      this.#outbox = [];
      if (!this.#failure) this.#socket.write(out.length === 1 ? out[0]! : Buffer.concat(out));
    });
  }

  close(): void {
    this.#fail(new Unusable('closed'));
  }

  /** Gives up: the calls still pending fail as timed out. */
  abort(): void {
    this.#fail(new Unusable('timed out'));
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
      else if (reply.sender === BUS.destination || pending.to.destination === BUS.destination)
        pending.reject(new Unusable(describeError(pending, reply)));
      else pending.reject(new ServiceError(describeError(pending, reply), reply.errorName));
    }
  }

  #fail(err: Error): void {
    if (this.#failure) return;
    this.#failure = err;
    // On the next turn: tearing the socket down costs ~0.5 ms that a process about to exit need not spend.
    setImmediate(() => this.#socket.destroy());
    for (const pending of this.#pending.values()) pending.reject(err);
    this.#pending.clear();
  }
}

function describeError(call: Pending, reply: Reply): string {
  const name = reply.errorName ?? 'an unnamed error';
  if (call.to.destination === BUS.destination) return `the D-Bus session bus refused ${call.member} (${name})`;
  const service = call.to.label ?? call.to.destination;
  // Errors the bus sends in the service's stead (ServiceUnknown, a failed activation) mean nobody serves it.
  if (reply.sender === BUS.destination) return `no ${service} on the D-Bus session bus (${name})`;
  return `the ${service} failed ${call.member} (${name})`;
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

function methodCall(
  serial: number,
  to: Target,
  member: string,
  signature: string,
  body?: (m: Marshal) => void,
): Buffer {
  const m = new Marshal();
  // Fixed header: endianness 'l', type, flags, protocol version 1, body length (set below), serial.
  m.byte(0x6c);
  m.byte(METHOD_CALL);
  m.byte(0);
  m.byte(1);
  m.u32(0);
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
  const start = m.length;
  body?.(m);
  m.u32At(4, m.length - start);
  return m.bytes();
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

/** Little-endian marshalling of the few types sent here ("Marshaling (Wire Format)"), into one growing buffer. */
export class Marshal {
  // Zero-filled, so padding is a matter of moving on.
  #buf = Buffer.alloc(256);
  #length = 0;

  get length(): number {
    return this.#length;
  }

  #room(n: number): void {
    if (this.#length + n <= this.#buf.length) return;
    const bigger = Buffer.alloc(Math.max(this.#buf.length * 2, this.#length + n));
    this.#buf.copy(bigger, 0, 0, this.#length);
    this.#buf = bigger;
  }

  pad(to: number): void {
    const end = alignUp(this.#length, to);
    this.#room(end - this.#length);
    this.#length = end;
  }

  byte(v: number): void {
    this.#room(1);
    this.#buf[this.#length++] = v & 0xff;
  }

  u32(v: number): void {
    this.pad(4);
    this.#room(4);
    this.#length = this.#buf.writeUInt32LE(v, this.#length);
  }

  /** Overwrites the UINT32 at `offset`, written earlier as a placeholder. */
  u32At(offset: number, v: number): void {
    this.#buf.writeUInt32LE(v, offset);
  }

  /** STRING and OBJECT_PATH: length, UTF-8 bytes, NUL. */
  string(s: string): void {
    const length = Buffer.byteLength(s, 'utf8');
    this.u32(length);
    this.#room(length + 1);
    this.#length += this.#buf.write(s, this.#length, 'utf8') + 1;
  }

  signature(s: string): void {
    this.byte(s.length);
    this.#room(s.length + 1);
    this.#length += this.#buf.write(s, this.#length, 'latin1') + 1;
  }

  /** The length excludes the padding between it and the first element. */
  array(elementAlignment: number, write: () => void): void {
    this.u32(0);
    const at = this.#length - 4;
    this.pad(elementAlignment);
    const start = this.#length;
    write();
    this.u32At(at, this.#length - start);
  }

  /** VARIANT holding a STRING. */
  variantString(s: string): void {
    this.signature('s');
    this.string(s);
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
    return this.#buf.subarray(0, this.#length);
  }
}

/** Reads the types the replies here contain, in either byte order; offsets count from the message start. */
export class Unmarshal {
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
    return this.#text(length, 'utf8');
  }

  signature(): string {
    return this.#text(this.byte(), 'latin1');
  }

  /** ARRAY of OBJECT_PATH. */
  objectPaths(): string[] {
    const length = this.u32();
    const end = this.pos + length;
    const paths: string[] = [];
    while (this.pos < end) paths.push(this.string());
    return paths;
  }

  /** ARRAY of BYTE. */
  byteArray(): Buffer {
    const length = this.u32();
    if (this.pos + length > this.buf.length) throw new RangeError('truncated message');
    const bytes = Buffer.from(this.buf.subarray(this.pos, this.pos + length));
    this.pos += length;
    return bytes;
  }

  /** A VARIANT whose value is skipped; only the simple types a reply here may carry. */
  skipVariant(): void {
    const type = this.signature();
    if (type === 's' || type === 'o') this.string();
    else if (type === 'ay') this.byteArray();
    else throw new RangeError(`unexpected variant type ${type}`);
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

  /** `length` bytes of text and the NUL after them. */
  #text(length: number, encoding: BufferEncoding): string {
    const s = this.buf.toString(encoding, this.pos, this.pos + length);
    this.pos += length + 1;
    return s;
  }
}

/**
 * A bounded look at the Secret Service before the keychain library, which blocks without limit: just enough D-Bus on a
 * socket of its own to ask whether the default collection is locked. It reads no secret.
 */
import { type Clock, sleep, systemClock } from '../clock.js';
import { createConnection, type Socket } from 'node:net';

export type CheckResult = { status: 'ready' } | { status: 'unavailable'; reason: string } | { status: 'unchecked' };

export const LOCKED = 'the keyring is locked (unlock it, e.g. by signing in to the desktop)';
const SECRETS = 'org.freedesktop.secrets';
const PROPERTIES = 'org.freedesktop.DBus.Properties';
const SECRETS_SERVICE = 'org.freedesktop.Secret.Service';
const COLLECTION = 'org.freedesktop.Secret.Collection';
const NO_BUS = 'no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)';
const MALFORMED = 'the D-Bus session bus sent a malformed message';
/** Message types and header field codes ("Message Format"). */
const METHOD_RETURN = 2;
const ERROR = 3;
const FIELD_ERROR_NAME = 4;
const FIELD_REPLY_SERIAL = 5;
const MAX_MESSAGE = 1 << 20;

class Unusable extends Error {}

export function keychainTimeoutReason(timeoutMs: number): string {
  return `keychain did not answer within ${Number((timeoutMs / 1000).toFixed(3))} s`;
}

export function sessionBusOf(env: Record<string, string | undefined>): string {
  return env.DBUS_SESSION_BUS_ADDRESS || `runtime:${env.XDG_RUNTIME_DIR ?? ''}`;
}

/** The Unix socket libdbus would use ("Server Addresses"), null for another transport, undefined for no bus. */
export function sessionBusSocket(env: Record<string, string | undefined>): string | null | undefined {
  const address = env.DBUS_SESSION_BUS_ADDRESS;
  if (!address) return env.XDG_RUNTIME_DIR ? `${env.XDG_RUNTIME_DIR}/bus` : undefined;
  const [transport, params = ''] = address.split(';')[0]!.split(/:(.*)/s);
  if (transport !== 'unix') return null;
  const values = new Map(
    params.split(',').map((pair) => {
      const eq = pair.indexOf('=');
      return [pair.slice(0, eq), decodeAddressValue(pair.slice(eq + 1))] as const;
    }),
  );
  const path = values.get('path');
  const abstract = values.get('abstract');
  // A Linux abstract socket's name starts with a NUL byte, which Node passes on to connect().
  return path ?? (abstract === undefined ? null : `\0${abstract}`);
}

function decodeAddressValue(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

export async function checkSecretService(opts: {
  env: Record<string, string | undefined>;
  timeoutMs: number;
  /** The clock of the timeout; the machine's by default. */
  clock?: Clock;
}): Promise<CheckResult> {
  const path = sessionBusSocket(opts.env);
  if (path === undefined) return { status: 'unavailable', reason: NO_BUS };
  if (path === null) return { status: 'unchecked' };
  const bus = new Connection(path);
  const clock = opts.clock ?? systemClock;
  const timer = clock.setTimeout(() => bus.fail(new Unusable(keychainTimeoutReason(opts.timeoutMs))), opts.timeoutMs);
  try {
    // SASL EXTERNAL with this process's uid ("Authentication Protocol"), with BEGIN and the first messages right
    // behind AUTH ("BEGIN command"); a bus that answers REJECTED leaves the keyring unchecked.
    const uid = Buffer.from(String(process.getuid?.() ?? 0)).toString('hex');
    bus.send(
      Buffer.concat([
        Buffer.from(`\0AUTH EXTERNAL ${uid}\r\nBEGIN\r\n`, 'latin1'),
        methodCall(1, 'org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'Hello', []),
        // gnome-keyring records a new caller only after its first message, and may answer a call that needs that
        // record wrongly until then; a property of the service itself needs none, so it goes first, alone.
        methodCall(2, SECRETS, '/org/freedesktop/secrets', PROPERTIES, 'Get', [SECRETS_SERVICE, 'Collections']),
      ]),
    );
    if (!(await bus.line()).startsWith('OK ')) return { status: 'unchecked' };
    const first = await bus.reply(2);
    if (first.error !== undefined) {
      throw new Unusable(
        first.error === 'org.freedesktop.DBus.Error.ServiceUnknown'
          ? `no Secret Service on the D-Bus session bus (${first.error})`
          : `the Secret Service failed a call (${first.error})`,
      );
    }
    // A missing or locked default collection would make the first write (or read) wait on a prompt.
    const locked = await defaultLocked(bus, clock);
    if (locked.error !== undefined) throw new Unusable('the keyring has no default collection');
    if (lockedValue(locked.body, locked.littleEndian)) throw new Unusable(LOCKED);
    return { status: 'ready' };
  } catch (err) {
    if (err instanceof Unusable) return { status: 'unavailable', reason: err.message };
    throw err;
  } finally {
    timer.clear();
    bus.close();
  }
}

/** gnome-keyring can deny the alias exists before it has recorded a new caller: that is believed only if repeated. */
async function defaultLocked(bus: Connection, clock: Clock): Promise<Message & { error?: string }> {
  for (let serial = 3, pauseMs = 5; ; serial++, pauseMs *= 4) {
    if (serial > 3) await sleep(clock, pauseMs);
    const path = '/org/freedesktop/secrets/aliases/default';
    bus.send(methodCall(serial, SECRETS, path, PROPERTIES, 'Get', [COLLECTION, 'Locked']));
    const answer = await bus.reply(serial);
    if (answer.error === undefined || serial === 6) return answer;
  }
}

/** The body of Properties.Get's reply, a VARIANT that must hold a BOOLEAN (marshalled as a UINT32 0 or 1). */
function lockedValue(body: Buffer, littleEndian: boolean): boolean {
  if (body.length < 8 || body.toString('latin1', 0, 3) !== '\x01b\0') {
    throw new Unusable('the Secret Service answered an unexpected Locked property');
  }
  return (littleEndian ? body.readUInt32LE(4) : body.readUInt32BE(4)) !== 0;
}

/** One socket to the bus; every wait on it ends when the socket fails, closes or is failed by the caller. */
class Connection {
  readonly #socket: Socket;
  #buffered = Buffer.alloc(0);
  #failure: Error | null = null;
  #wake: (() => void) | null = null;

  constructor(path: string) {
    this.#socket = createConnection(path);
    this.#socket.on('data', (chunk: Buffer) => {
      this.#buffered = Buffer.concat([this.#buffered, chunk]);
      this.#wake?.();
    });
    this.#socket.on('error', (err: NodeJS.ErrnoException) => {
      const where = path.startsWith('\0') ? `@${path.slice(1)}` : path;
      this.fail(new Unusable(`cannot connect to the D-Bus session bus at ${where} (${err.code ?? err.message})`));
    });
    this.#socket.on('close', () => this.fail(new Unusable('the D-Bus session bus closed the connection')));
  }

  fail(err: Error): void {
    this.#failure ??= err;
    this.#wake?.();
  }

  send(bytes: Buffer): void {
    this.#socket.write(bytes);
  }

  close(): void {
    this.#socket.destroy();
  }

  /** The next line of the authentication exchange, without its CRLF. */
  line(): Promise<string> {
    return this.#until(() => {
      const end = this.#buffered.indexOf('\r\n');
      if (end < 0) return null;
      const text = this.#buffered.toString('latin1', 0, end);
      this.#buffered = this.#buffered.subarray(end + 2);
      return text;
    });
  }

  /** The reply to call `serial`; signals and other replies on the way are skipped. */
  reply(serial: number): Promise<Message & { error?: string }> {
    return this.#until(() => {
      for (;;) {
        const message = takeMessage(this.#buffered);
        if (message === null) return null;
        this.#buffered = this.#buffered.subarray(message.size);
        if (message.replySerial === serial && (message.type === METHOD_RETURN || message.type === ERROR)) {
          return { error: message.errorName ?? (message.type === ERROR ? 'an error' : undefined), ...message };
        }
      }
    });
  }

  async #until<T>(take: () => T | null): Promise<T> {
    for (;;) {
      const value = take();
      if (value !== null) return value;
      if (this.#failure) throw this.#failure;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = null;
    }
  }
}

interface Message {
  size: number;
  type: number;
  replySerial?: number;
  errorName?: string;
  body: Buffer;
  littleEndian: boolean;
}

/** The whole message at the start of `buf`, or null while it is incomplete. */
function takeMessage(buf: Buffer): Message | null {
  if (buf.length < 16) return null;
  const littleEndian = buf[0] === 0x6c; // 'l'
  const u32 = (at: number) => (littleEndian ? buf.readUInt32LE(at) : buf.readUInt32BE(at));
  const fieldsEnd = 16 + u32(12);
  const bodyStart = align(fieldsEnd, 8);
  const size = bodyStart + u32(4);
  if (size > MAX_MESSAGE) throw new Unusable(MALFORMED);
  if (buf.length < size) return null;
  const message: Message = { size, type: buf[1]!, body: buf.subarray(bodyStart, size), littleEndian };
  try {
    // Header fields: ARRAY of STRUCT(BYTE code, VARIANT value); only the reply serial and error name matter here.
    for (let at = 16; at < fieldsEnd;) {
      at = align(at, 8);
      const code = buf[at]!;
      const type = String.fromCharCode(buf[at + 2]!);
      at += 3 + buf[at + 1]!;
      if (type === 'g') {
        at += buf[at]! + 2;
        continue;
      }
      at = align(at, 4);
      if (type === 'u') {
        if (code === FIELD_REPLY_SERIAL) message.replySerial = u32(at);
        at += 4;
        continue;
      }
      const length = u32(at);
      if (code === FIELD_ERROR_NAME) message.errorName = buf.toString('utf8', at + 4, at + 4 + length);
      at += 4 + length + 1;
    }
  } catch {
    throw new Unusable(MALFORMED);
  }
  return message;
}

/** A little-endian METHOD_CALL whose arguments are all STRINGs. */
function methodCall(serial: number, to: string, path: string, iface: string, member: string, args: string[]): Buffer {
  const body: number[] = [];
  for (const arg of args) putString(body, arg);
  const head = [0x6c, 1, 0, 1];
  putU32(head, body.length);
  putU32(head, serial);
  putU32(head, 0); // the fields' length, set below
  const field = (code: number, type: string, write: () => void) => {
    pad(head, 8);
    head.push(code, 1, type.charCodeAt(0), 0);
    write();
  };
  field(1, 'o', () => putString(head, path));
  field(2, 's', () => putString(head, iface));
  field(3, 's', () => putString(head, member));
  field(6, 's', () => putString(head, to));
  if (args.length > 0) field(8, 'g', () => head.push(args.length, ...Buffer.from('s'.repeat(args.length)), 0));
  const fieldsLength = head.length - 16;
  pad(head, 8);
  const out = Buffer.from([...head, ...body]);
  out.writeUInt32LE(fieldsLength, 12);
  return out;
}

function pad(bytes: number[], to: number): void {
  while (bytes.length % to !== 0) bytes.push(0);
}

function putU32(bytes: number[], value: number): void {
  pad(bytes, 4);
  bytes.push(value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, value >>> 24);
}

function putString(bytes: number[], value: string): void {
  const utf8 = Buffer.from(value, 'utf8');
  putU32(bytes, utf8.length);
  bytes.push(...utf8, 0);
}

function align(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/**
 * The OS keychain (@napi-rs/keyring) reached through a helper process.
 *
 * Why a process and not an in-process call: on Linux the library opens its D-Bus connection synchronously while
 * constructing an entry, so a Secret Service that accepts the connection and never answers blocks the calling
 * thread — in the main thread no timer can fire, and in a worker thread even process.exit() waits for it forever.
 * A child process can always be killed, so every call gets a real timeout (the same lesson as gh's keyring
 * wrapper). One helper serves all calls of an invocation, so the start-up cost is paid once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { ExitCode, IdcliError } from '../errors.js';

export const DEFAULT_KEYCHAIN_TIMEOUT_MS = 3000;

export interface KeyringClientOptions {
  service: string;
  timeoutMs?: number;
  /** Environment of the helper (D-Bus address, XDG dirs); defaults to this process's. */
  env?: Record<string, string | undefined>;
}

/** Raw byte access to entries of one keychain service. */
export interface KeyringBackend {
  get(account: string): Promise<Buffer | null>;
  set(account: string, value: Buffer): Promise<void>;
  delete(account: string): Promise<boolean>;
  /** Account names stored under the service. */
  list(): Promise<string[]>;
  close(): void;
}

// The helper runs as CommonJS from `node -e`, so it needs no file of its own next to a bundled build.
// Secrets are written with setSecret (bytes): on Windows a password is stored as UTF-16 and would halve the
// 2560-byte Credential Manager limit. Linux entries are pinned to the Secret Service, because the library's
// default falls back to the kernel keyring, which forgets everything at logout/reboot — a silent data loss that
// must instead surface as "keychain unavailable" so `auto` announces the file store.
const HELPER_SOURCE = `
'use strict';
const readline = require('node:readline');
let lib = null;
let loadError = null;
try { lib = require(process.argv[1]); } catch (err) { loadError = 'cannot load @napi-rs/keyring: ' + String(err && err.message || err).split('\\n')[0]; }
const service = process.argv[2];
const options = process.platform === 'linux' ? { linux: { store: 'secret-service' } } : undefined;
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
async function handle(req) {
  if (loadError) throw new Error(loadError);
  if (req.op === 'list') return (await lib.findCredentialsAsync(service)).map((c) => c.account);
  const entry = new lib.AsyncEntry(service, req.account, options);
  if (req.op === 'get') { const s = await entry.getSecret(); return s === null ? null : Buffer.from(s).toString('base64'); }
  if (req.op === 'set') { await entry.setSecret(Buffer.from(req.value, 'base64')); return null; }
  if (req.op === 'delete') return await entry.deleteCredential();
  throw new Error('unknown operation');
}
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let req;
  try { req = JSON.parse(line); } catch { return; }
  handle(req).then(
    (value) => send({ id: req.id, ok: true, value }),
    (err) => send({ id: req.id, ok: false, error: String(err && err.message || err).split('\\n')[0] }),
  );
});
rl.on('close', () => process.exit(0));
`;

interface Pending {
  resolve(value: unknown): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
}

interface Reply {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

export class KeyringClient implements KeyringBackend {
  readonly service: string;
  readonly timeoutMs: number;
  readonly #env: Record<string, string | undefined>;
  #child: ChildProcess | null = null;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  /** Set once the keychain failed in a way that makes further calls pointless (timeout, helper died). */
  #broken: IdcliError | null = null;

  constructor(opts: KeyringClientOptions) {
    this.service = opts.service;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_KEYCHAIN_TIMEOUT_MS;
    this.#env = opts.env ?? process.env;
  }

  async get(account: string): Promise<Buffer | null> {
    const value = await this.#call({ op: 'get', account });
    if (value === null) return null;
    if (typeof value !== 'string') throw keychainError('unexpected answer from the keychain helper');
    return Buffer.from(value, 'base64');
  }

  async set(account: string, value: Buffer): Promise<void> {
    await this.#call({ op: 'set', account, value: value.toString('base64') });
  }

  async delete(account: string): Promise<boolean> {
    return (await this.#call({ op: 'delete', account })) === true;
  }

  async list(): Promise<string[]> {
    const value = await this.#call({ op: 'list' });
    if (!Array.isArray(value)) throw keychainError('unexpected answer from the keychain helper');
    return value.filter((v): v is string => typeof v === 'string');
  }

  /** Lets the helper go: it exits when its stdin closes. */
  close(): void {
    const child = this.#child;
    this.#child = null;
    if (child) child.stdin?.end();
  }

  #call(req: Record<string, unknown>): Promise<unknown> {
    if (this.#broken) return Promise.reject(this.#broken);
    let child: ChildProcess;
    try {
      child = this.#spawn();
    } catch (err) {
      return Promise.reject(err);
    }
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        const err = keychainError(`keychain did not answer within ${formatSeconds(this.timeoutMs)}`);
        this.#fail(err);
        reject(err);
      }, this.timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
      child.stdin?.write(`${JSON.stringify({ ...req, id })}\n`);
    });
  }

  #spawn(): ChildProcess {
    if (this.#child) return this.#child;
    let modulePath: string;
    try {
      modulePath = createRequire(import.meta.url).resolve('@napi-rs/keyring');
    } catch {
      throw keychainError('the @napi-rs/keyring module is not installed');
    }
    const child = spawn(process.execPath, ['-e', HELPER_SOURCE, modulePath, this.service], {
      // stderr is dropped: the helper answers errors on stdout, and nothing it could print belongs in a message.
      stdio: ['pipe', 'pipe', 'ignore'],
      env: this.#env,
      windowsHide: true,
    });
    this.#child = child;
    // The helper must never keep the CLI alive: pending calls hold a (ref'd) timer, idle time holds nothing.
    child.unref();
    for (const stream of [child.stdin, child.stdout]) (stream as unknown as Socket | null)?.unref?.();
    child.stdin?.on('error', () => {}); // EPIPE when the helper died; reported through 'close'.
    if (child.stdout) createInterface({ input: child.stdout }).on('line', (line) => this.#onLine(line));
    child.on('error', (err) => this.#fail(keychainError(`cannot start the keychain helper (${(err as NodeJS.ErrnoException).code ?? err.message})`)));
    // 'close' (not 'exit') fires after stdout is drained, so a reply written just before exiting is not lost.
    child.on('close', (code, signal) => {
      if (this.#child === child) this.#child = null;
      if (this.#pending.size > 0) this.#fail(keychainError(`keychain helper exited (${signal ?? `code ${code}`})`));
    });
    return child;
  }

  #onLine(line: string): void {
    let reply: Reply;
    try {
      reply = JSON.parse(line) as Reply;
    } catch {
      return;
    }
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    this.#pending.delete(reply.id);
    clearTimeout(pending.timer);
    if (reply.ok) pending.resolve(reply.value ?? null);
    else pending.reject(keychainError(firstLine(reply.error ?? 'unknown keychain error')));
  }

  /** Rejects every pending call and kills the helper: a hung Secret Service will not recover within this run. */
  #fail(err: IdcliError): void {
    this.#broken = err;
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      pending.reject(err);
      this.#pending.delete(id);
    }
    const child = this.#child;
    this.#child = null;
    child?.kill('SIGKILL');
  }
}

/** Keychain trouble is a configuration problem of this machine (exit 2), the same class as "keychain demanded but unavailable". */
export function keychainError(message: string): IdcliError {
  return new IdcliError(message, ExitCode.USAGE, { hint: 'set IDCLI_CREDENTIAL_STORE=file to use the file store' });
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

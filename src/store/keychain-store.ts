/**
 * Credential records in the OS keychain: a head entry per account, plus chunks for records over Windows's 2560 bytes.
 * The commit point: new chunks under names unique to this write, then the head (write, count, SHA-256) in ONE call,
 * then the previous chunks deleted. A crash before the head write leaves the old head and chunks intact.
 */
import { usageError } from '../errors.js';
import { errMessage, isJsonObject } from '../shape.js';
import type { CommitHooks, CredentialStore, WriteOptions } from './interface.js';
import { type KeyringBackend, KeyringClient, type KeyringClientOptions } from './keyring-client.js';
import type { CredentialKey, CredentialRecord } from './record.js';
import {
  accountName,
  CredentialRecordError,
  decodeRecord,
  encodeRecord,
  recordFrom,
  validateRecord,
} from './record.js';

/** Under the 2560-byte Windows limit with room to spare; also the largest head kept inline. */
export const CHUNK_BYTES = 2000;
const HEAD_FORMAT = 'idcli-credential-head';
const READ_ATTEMPTS = 3;

interface ChunkedHead {
  format: typeof HEAD_FORMAT;
  v: 1;
  generation: number;
  /** Names this write's chunks, so they never collide with the chunks the current head still points at. */
  write: string;
  chunks: number;
  bytes: number;
  sha256: string;
}

/** A small record is kept inline, in a head with the same format, v and generation (see write). */
type InlineHead = { record: unknown };
type ReadHead = Pick<ChunkedHead, 'write' | 'chunks' | 'bytes' | 'sha256'>;

export interface KeychainStoreOptions extends KeyringClientOptions {
  hooks?: CommitHooks;
  backend?: KeyringBackend;
}

export class KeychainStore implements CredentialStore {
  readonly kind = 'keychain' as const;
  readonly service: string;
  readonly backend: KeyringBackend;
  readonly #hooks: CommitHooks;

  constructor(opts: KeychainStoreOptions) {
    this.service = opts.service;
    this.backend = opts.backend ?? new KeyringClient(opts);
    this.#hooks = opts.hooks ?? {};
  }

  describe(): string {
    return `OS keychain (service "${this.service}")`;
  }

  /** null when the keychain can be used; otherwise why not. */
  async probe(): Promise<string | null> {
    try {
      await this.backend.ready();
      return null;
    } catch (err) {
      return errMessage(err);
    }
  }

  close(): void {
    this.backend.close();
  }

  /** The keychain's own check, made afresh: the state it was in when this run opened it may have changed since. */
  async checkWritable(): Promise<void> {
    try {
      await this.backend.writable();
    } catch (err) {
      const message = `the ${this.describe()} cannot save credentials now: ${errMessage(err)}`;
      throw usageError('KEYCHAIN_WRITE_FAILED', message, 'run the command again once it can');
    }
  }

  async read(key: CredentialKey): Promise<CredentialRecord | null> {
    const account = accountName(key);
    let previous: Buffer | null = null;
    let reason = 'unknown';
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const raw = await this.backend.get(account);
      if (raw === null) return null;
      // Same head as last time: the chunks are really broken, not just replaced by a concurrent writer.
      if (previous?.equals(raw)) break;
      previous = raw;
      const head = this.#parseHead(raw);
      if ('record' in head) return recordFrom(this.describe(), () => validateRecord(head.record));
      const parts = await Promise.all(chunkNames(account, head).map((name) => this.backend.get(name)));
      const found = parts.filter((p) => p !== null);
      if (found.length < parts.length) {
        reason = 'a part is missing';
        continue;
      }
      const whole = Buffer.concat(found);
      if (whole.length !== head.bytes || (await sha256(whole)) !== head.sha256) {
        reason = 'checksum mismatch';
        continue;
      }
      return recordFrom(this.describe(), () => decodeRecord(whole.toString('utf8')));
    }
    throw new CredentialRecordError(reason, this.describe());
  }

  async write(key: CredentialKey, record: CredentialRecord, opts: WriteOptions = {}): Promise<void> {
    const account = accountName(key);
    const previous = await this.#currentChunks(account);
    const body = encodeRecord(record);
    const inline = Buffer.from(`{"format":"${HEAD_FORMAT}","v":1,"generation":${record.generation},"record":${body}}`);
    if (inline.length <= CHUNK_BYTES) {
      await this.#commit(account, inline, opts.beforeCommit);
    } else {
      const whole = Buffer.from(body, 'utf8');
      const { randomBytes } = await import('node:crypto');
      const write = `${record.generation}-${randomBytes(4).toString('hex')}`;
      const names: string[] = [];
      try {
        for (let i = 0, off = 0; off < whole.length; i++, off += CHUNK_BYTES) {
          const name = chunkAccount(account, write, i);
          names.push(name);
          await this.backend.set(name, whole.subarray(off, off + CHUNK_BYTES));
        }
      } catch (err) {
        await deleteQuietly(this.backend, names);
        throw err;
      }
      const head: ChunkedHead = {
        format: HEAD_FORMAT,
        v: 1,
        generation: record.generation,
        write,
        chunks: names.length,
        bytes: whole.length,
        sha256: await sha256(whole),
      };
      // No cleanup if the commit fails: a timed-out head write may still have landed, and then these chunks are current.
      await this.#commit(account, Buffer.from(JSON.stringify(head), 'utf8'), opts.beforeCommit);
    }
    await deleteQuietly(this.backend, previous);
  }

  async delete(key: CredentialKey): Promise<boolean> {
    const account = accountName(key);
    const previous = await this.#currentChunks(account);
    // The head goes first: from then on the record is gone, whatever happens to the chunks.
    let removed = await this.backend.delete(account);
    removed = (await deleteQuietly(this.backend, previous)) || removed;
    // Chunks of writers that died before their commit are referenced by no head; find them by name.
    try {
      const prefix = chunkPrefix(account);
      const orphans = (await this.backend.list()).filter((name) => name.startsWith(prefix));
      removed = (await deleteQuietly(this.backend, orphans)) || removed;
    } catch {
      // Listing is an extra; some platforms cannot enumerate reliably.
    }
    return removed;
  }

  async #commit(account: string, head: Buffer, beforeCommit?: () => Promise<void>): Promise<void> {
    if (this.#hooks.beforeCommit) await this.#hooks.beforeCommit();
    await beforeCommit?.();
    await this.backend.set(account, head);
  }

  /** The head's fields the read needs, each checked; a record kept inline is checked by the record's reader. */
  #parseHead(raw: Buffer): InlineHead | ReadHead {
    let h: unknown;
    try {
      h = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new CredentialRecordError('not JSON', this.describe());
    }
    if (!isJsonObject(h) || h.format !== HEAD_FORMAT || h.v !== 1)
      throw new CredentialRecordError('unknown entry format', this.describe());
    if ('record' in h) return { record: h.record };
    const { write, chunks = 0, bytes, sha256: digest } = h;
    const validWrite = typeof write === 'string' && /^[0-9]+-[0-9a-f]+$/.test(write) && typeof digest === 'string';
    const validCount = typeof chunks === 'number' && Number.isSafeInteger(chunks) && chunks > 0 && chunks <= 1000;
    if (!validWrite || !validCount || typeof bytes !== 'number' || !Number.isSafeInteger(bytes))
      throw new CredentialRecordError('malformed head entry', this.describe());
    return { write, chunks, bytes, sha256: digest };
  }

  /** The current head's chunks, for cleanup; a missing or unreadable head just means there is nothing to clean. */
  async #currentChunks(account: string): Promise<string[]> {
    const raw = await this.backend.get(account);
    try {
      const head = raw === null ? null : this.#parseHead(raw);
      return head && 'write' in head ? chunkNames(account, head) : [];
    } catch {
      return [];
    }
  }
}

/** Best effort: a leftover chunk wastes a little space but never affects which record is current. */
async function deleteQuietly(backend: KeyringBackend, names: string[]): Promise<boolean> {
  let removed = false;
  for (const name of names) {
    try {
      removed = (await backend.delete(name)) || removed;
    } catch {
      // Left for the next logout's sweep; a hung keychain fails the remaining calls at once.
    }
  }
  return removed;
}

function chunkPrefix(account: string): string {
  return `${account}#chunk.`;
}

export function chunkAccount(account: string, write: string, index: number): string {
  return `${chunkPrefix(account)}${write}.${index}`;
}

function chunkNames(account: string, head: Pick<ChunkedHead, 'write' | 'chunks'>): string[] {
  return Array.from({ length: head.chunks }, (_, i) => chunkAccount(account, head.write, i));
}

/** node:crypto is loaded only for chunked records: a cached read of a small one never needs it. */
async function sha256(data: Buffer): Promise<string> {
  const { createHash } = await import('node:crypto');
  return createHash('sha256').update(data).digest('hex');
}

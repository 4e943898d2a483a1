/**
 * The keychain store against the REAL OS keychain: run as `scripts/with-keyring.sh npx vitest run test/store`,
 * which provides a private gnome-keyring and sets IDCLI_TEST_KEYRING=1. CI also sets IDCLI_REQUIRE_KEYCHAIN=1
 * so a missing keyring fails the run instead of quietly skipping these tests.
 */
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { CHUNK_BYTES, chunkAccount, KeychainStore } from '../../src/store/keychain-store.js';
import { accountName } from '../../src/store/record.js';
import { allStores, openStore } from '../../src/store/select.js';
import { KEY, runFixture, sampleRecord, waitForExit, waitForLine } from '../support/store.js';
import { tempDir } from '../support/cli.js';
import { rejection } from '../support/rejection.js';

const HAVE_KEYRING = process.env.IDCLI_TEST_KEYRING === '1';
// Production waits 3 s for the keychain; on a shared, loaded test machine gnome-keyring can be slower than that,
// and these tests are about what is stored, not about the timeout (select.test.ts covers that).
const TIMEOUT_MS = 20_000;
const REQUIRE_KEYRING = process.env.IDCLI_REQUIRE_KEYCHAIN === '1';
const exec = promisify(execFile);

describe.runIf(REQUIRE_KEYRING)('keychain requirement (IDCLI_REQUIRE_KEYCHAIN=1)', () => {
  it('has a real keyring to test against', () => {
    expect(HAVE_KEYRING, 'no keyring: run the tests under scripts/with-keyring.sh').toBe(true);
  });
});

/** Reads an entry the way any other program would: through the Secret Service, not through idcli. */
async function secretTool(service: string, account: string): Promise<Buffer | null> {
  try {
    const { stdout } = await exec('secret-tool', ['lookup', 'service', service, 'username', account], {
      encoding: 'buffer',
    });
    return stdout;
  } catch {
    return null; // secret-tool exits 1 when nothing matches
  }
}

describe.runIf(HAVE_KEYRING)('keychain store (real Secret Service)', () => {
  const service = `idcli-test-${process.pid}-${Date.now().toString(36)}`;
  const account = accountName(KEY);
  let dir: { path: string; cleanup: () => Promise<void> };
  let store: KeychainStore;
  let warnings: string[];

  beforeEach(async () => {
    dir = await tempDir();
    warnings = [];
    store = new KeychainStore({ service, timeoutMs: TIMEOUT_MS });
  });
  afterEach(async () => {
    await store.delete(KEY).catch(() => {});
    store.close();
    await dir.cleanup();
  });
  afterAll(async () => {
    await exec('secret-tool', ['clear', 'service', service]).catch(() => {});
  });

  /** The store `mode` selects for this suite's service and directory, its warnings collected. */
  const open = (mode: 'auto' | 'keychain') =>
    openStore({ mode, configDir: dir.path, service, warn: (m) => warnings.push(m), timeoutMs: TIMEOUT_MS });

  it('is what auto mode picks, and its writes land in the keychain, not in files', async () => {
    const opened = await open('auto');
    expect(opened.kind).toBe('keychain');
    expect(opened.describe()).toBe(`OS keychain (service "${service}")`);
    expect(warnings).toEqual([]);
    await opened.write(KEY, sampleRecord());
    expect(await opened.read(KEY)).toEqual(sampleRecord());

    const raw = await secretTool(service, account);
    expect(raw).not.toBeNull();
    const head = JSON.parse(raw!.toString('utf8')) as { record: unknown; generation: number };
    expect(head.record).toEqual(sampleRecord());
    expect(head.generation).toBe(1);
    expect(await readdir(dir.path)).toEqual([]);
    (opened as KeychainStore).close();
  });

  it('keychain mode opens it too', async () => {
    const opened = await open('keychain');
    expect(opened.kind).toBe('keychain');
    (opened as KeychainStore).close();
  });

  it('allStores offers the keychain and the file store', async () => {
    const stores = await allStores({ configDir: dir.path, service, timeoutMs: TIMEOUT_MS });
    expect(stores.map((s) => s.kind)).toEqual(['keychain', 'file']);
    for (const s of stores) if (s instanceof KeychainStore) s.close();
  });

  it('reads null when nothing is stored, deletes what is, and reports false for nothing', async () => {
    expect(await store.read(KEY)).toBeNull();
    expect(await store.delete(KEY)).toBe(false);
    await store.write(KEY, sampleRecord());
    expect(await store.delete(KEY)).toBe(true);
    expect(await store.read(KEY)).toBeNull();
    expect(await secretTool(service, account)).toBeNull();
  });

  it('splits a record with a large ID token into chunks under the Windows size limit and reads it back', async () => {
    const record = sampleRecord({ idToken: `eyJ${'x'.repeat(9000)}` });
    await store.write(KEY, record);
    const fresh = new KeychainStore({ service, timeoutMs: TIMEOUT_MS });
    expect(await fresh.read(KEY)).toEqual(record);
    fresh.close();

    const rawHead = await secretTool(service, account);
    const head = JSON.parse(rawHead!.toString('utf8')) as {
      write: string;
      chunks: number;
      bytes: number;
      sha256: string;
    };
    expect(rawHead!.length).toBeLessThan(CHUNK_BYTES);
    expect(head.chunks).toBe(Math.ceil(head.bytes / CHUNK_BYTES));
    expect(head.chunks).toBeGreaterThanOrEqual(5);
    expect(head.sha256).toMatch(/^[0-9a-f]{64}$/);
    let joined = Buffer.alloc(0);
    for (let i = 0; i < head.chunks; i++) {
      const chunk = await secretTool(service, chunkAccount(account, head.write, i));
      expect(chunk).not.toBeNull();
      expect(chunk!.length).toBeLessThanOrEqual(CHUNK_BYTES);
      joined = Buffer.concat([joined, chunk!]);
    }
    expect(JSON.parse(joined.toString('utf8'))).toEqual(record);
    expect((await store.backend.list()).sort()).toEqual(
      [account, ...Array.from({ length: head.chunks }, (_, i) => chunkAccount(account, head.write, i))].sort(),
    );
  });

  it('removes the previous chunks after each commit', async () => {
    await store.write(KEY, sampleRecord({ generation: 1, idToken: 'a'.repeat(6000) }));
    const first = await store.backend.list();
    await store.write(KEY, sampleRecord({ generation: 2, idToken: 'b'.repeat(8000) }));
    const second = await store.backend.list();
    expect(second.filter((n) => first.includes(n))).toEqual([account]);
    expect(second).toHaveLength(1 + 5);
    await store.write(KEY, sampleRecord({ generation: 3 }));
    expect(await store.backend.list()).toEqual([account]);
    expect(await store.read(KEY)).toEqual(sampleRecord({ generation: 3 }));
  });

  it('rejects a chunk that does not match the head hash with exit 3', async () => {
    await store.write(KEY, sampleRecord({ idToken: 'c'.repeat(5000) }));
    const head = JSON.parse((await secretTool(service, account))!.toString('utf8')) as { write: string };
    await store.backend.set(chunkAccount(account, head.write, 1), Buffer.from('d'.repeat(CHUNK_BYTES)));
    const err = await rejection(store.read(KEY));
    expect(err.exitCode).toBe(ExitCode.AUTH);
    expect(err.code).toBe('CREDENTIALS_UNREADABLE');
    expect(err.message).toMatch(/checksum mismatch/);
    expect(err.hint).toMatch(/idcli login/);

    await store.backend.delete(chunkAccount(account, head.write, 2));
    expect((await rejection(store.read(KEY))).message).toMatch(/part is missing/);
  });

  it('turns a garbage head entry into exit 3, and a new login overwrites it', async () => {
    await store.backend.set(account, Buffer.from('{"refreshToken":"rt-SECRET'));
    const err = await rejection(store.read(KEY));
    expect(err.exitCode).toBe(ExitCode.AUTH);
    expect(err.code).toBe('CREDENTIALS_UNREADABLE');
    expect(err.message).toContain(`service "${service}"`);
    expect(err.message).not.toContain('SECRET');
    await store.write(KEY, sampleRecord());
    expect(await store.read(KEY)).toEqual(sampleRecord());
  });

  it('refuses a head of the wrong shape, field by field, with exit 3 and why', async () => {
    await store.write(KEY, sampleRecord({ idToken: 'c'.repeat(5000) }));
    const good = JSON.parse((await secretTool(service, account))!.toString('utf8')) as Record<string, unknown>;
    const heads: [string, unknown][] = [
      ['unknown entry format', []],
      ['unknown entry format', { ...good, format: 'other' }],
      ['unknown entry format', { ...good, v: 2 }],
      ['malformed head entry', { ...good, write: undefined }],
      ['malformed head entry', { ...good, write: '1-xyz' }],
      ['malformed head entry', { ...good, sha256: 5 }],
      ['malformed head entry', { ...good, chunks: undefined }],
      ['malformed head entry', { ...good, chunks: '3' }],
      ['malformed head entry', { ...good, chunks: 1001 }],
      ['malformed head entry', { ...good, chunks: 1.5 }],
      ['malformed head entry', { ...good, bytes: String(good.bytes) }],
    ];
    for (const [why, head] of heads) {
      await store.backend.set(account, Buffer.from(JSON.stringify(head)));
      const err = await rejection(store.read(KEY));
      expect([err.exitCode, err.code, err.message.includes(why)], JSON.stringify(head)).toEqual([
        ExitCode.AUTH,
        'CREDENTIALS_UNREADABLE',
        true,
      ]);
    }
    await store.backend.set(account, Buffer.from(JSON.stringify(good)));
    expect(await store.read(KEY)).toEqual(sampleRecord({ idToken: 'c'.repeat(5000) }));
  });

  it('keeps the old record readable when a writer is killed before its head write (the commit point)', async () => {
    const child = runFixture('keychain-crash-writer', [service, String(TIMEOUT_MS)]);
    const exited = waitForExit(child);
    await waitForLine(child, 'ready');
    const beforeKill = await store.backend.list();
    child.kill('SIGKILL');
    expect((await exited).signal).toBe('SIGKILL');

    const fresh = new KeychainStore({ service, timeoutMs: TIMEOUT_MS });
    const record = await fresh.read(KEY);
    fresh.close();
    expect(record).toEqual(sampleRecord({ generation: 1, refreshToken: 'rt-old', idToken: 'a'.repeat(7000) }));
    // Generation 2's chunks were all written and are orphans now: 1 head + 4 old chunks + 5 new chunks.
    expect(beforeKill).toHaveLength(1 + 4 + 5);

    // A later write replaces only what the head points at; logout sweeps the orphans too.
    await store.write(KEY, sampleRecord({ generation: 3 }));
    expect(await store.read(KEY)).toEqual(sampleRecord({ generation: 3 }));
    expect(await store.delete(KEY)).toBe(true);
    expect(await store.backend.list()).toEqual([]);
  }, 60_000);

  it('gives back the bytes it stored exactly: not UTF-8, a NUL, the largest chunk', async () => {
    const value = Buffer.concat([
      Buffer.from([0, 0xff, 0xfe, 0x80]),
      Buffer.from('é'.repeat(900), 'utf8'),
      Buffer.alloc(100, 7),
    ]);
    expect(value.length).toBeLessThanOrEqual(CHUNK_BYTES);
    await store.backend.set('bytes', value);
    const other = new KeychainStore({ service, timeoutMs: TIMEOUT_MS });
    try {
      expect(await other.backend.get('bytes')).toEqual(value);
      expect(await other.backend.get('nobody')).toBeNull();
    } finally {
      other.close();
      await store.backend.delete('bytes');
    }
  });

  it('a read returns what is stored when it is made, not what was there when the store was opened', async () => {
    await store.write(KEY, sampleRecord({ generation: 4 }));
    // Two processes' stores: one opens (probes), the other writes, then the first reads, as a refresh that waited
    // for the lock does. A value fetched before the write would be a refresh token already spent.
    const waiting = new KeychainStore({ service, timeoutMs: TIMEOUT_MS });
    const writer = new KeychainStore({ service, timeoutMs: TIMEOUT_MS });
    try {
      expect(await waiting.probe()).toBeNull();
      expect(await writer.probe()).toBeNull();
      await writer.write(KEY, sampleRecord({ generation: 5 }));
      expect(await waiting.read(KEY)).toEqual(sampleRecord({ generation: 5 }));
      await writer.write(KEY, sampleRecord({ generation: 6 }));
      expect(await waiting.read(KEY)).toEqual(sampleRecord({ generation: 6 }));
    } finally {
      waiting.close();
      writer.close();
    }
  });
});

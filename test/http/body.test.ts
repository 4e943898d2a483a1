import { randomBytes } from 'node:crypto';
import { brotliCompressSync, crc32, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createBodySink } from '../../src/http/body.js';
import { GzipHeaderCheck, gzipHeaderLength } from '../../src/http/gzip-header.js';
import { acceptEncoding, decodersFor } from '../../src/http/content-coding.js';
import { resolveSetting, SETTINGS } from '../../src/config.js';
import { IdcliError } from '../../src/errors.js';
import { NetworkError } from '../../src/http/types.js';

/** IDCLI_HTTP_COMPRESSION as the settings read it; the transport is handed the result. */
const compressionWanted = (env: Record<string, string>) => resolveSetting(SETTINGS['http-compression'], { env });

const TEXT = Buffer.from('{"items":[{"id":90071992547409931,"s":"caf\\u00e9"}]}'.repeat(200));

/** Feeds `wire` to a sink in small chunks, as a socket would, and returns its body or its failure. */
async function assemble(
  wire: Buffer,
  headers: Record<string, string>,
  opts: { maxBody?: number; accepted?: string } = {},
): Promise<{ body?: Buffer; failed?: Error }> {
  const failures: Error[] = [];
  let wake = (): void => {};
  const sink = createBodySink({
    headers,
    accepted: 'accepted' in opts ? opts.accepted : 'gzip, br',
    maxBody: opts.maxBody,
    fail: (err) => {
      failures.push(err);
      wake();
    },
  });
  for (let at = 0; at < wire.length && failures.length === 0; at += 1000) {
    // A sink that says "wait" is given nothing more until it calls back, as a paused socket would.
    if (!sink.write(wire.subarray(at, at + 1000), () => wake())) await new Promise<void>((r) => (wake = r));
  }
  try {
    const body = await sink.end();
    return failures.length ? { failed: failures[0] } : { body };
  } catch (err) {
    return { failed: err as Error };
  }
}

describe('createBodySink', () => {
  it('gives back identity, gzip and br bodies byte for byte', async () => {
    expect((await assemble(TEXT, {})).body?.equals(TEXT)).toBe(true);
    const gz = await assemble(gzipSync(TEXT), { 'content-encoding': 'gzip' });
    expect(gz.body?.equals(TEXT)).toBe(true);
    const br = await assemble(brotliCompressSync(TEXT), { 'content-encoding': 'br' });
    expect(br.body?.equals(TEXT)).toBe(true);
    expect((await assemble(gzipSync(TEXT), { 'content-encoding': 'x-gzip' })).body?.equals(TEXT)).toBe(true);
  });

  it('hands the bytes over as sent when the caller chose its own Accept-Encoding', async () => {
    const wire = gzipSync(TEXT);
    const r = await assemble(wire, { 'content-encoding': 'gzip' }, { accepted: undefined });
    expect(r.body?.equals(wire)).toBe(true);
  });

  it('an empty body is empty whatever its coding (HEAD, 204)', async () => {
    const r = await assemble(Buffer.alloc(0), { 'content-encoding': 'gzip', 'content-length': '120' });
    expect(r.body?.length).toBe(0);
  });

  it('counts the limit on the decoded bytes, and stops there', async () => {
    const bomb = gzipSync(Buffer.alloc(8 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const r = await assemble(bomb, { 'content-encoding': 'gzip' }, { maxBody: 1024 * 1024 });
    expect(r.failed).toBeInstanceOf(NetworkError);
    expect((r.failed as NetworkError).retriable).toBe(false);
    expect(r.failed?.message).toMatch(/response too large \(over 1048576 bytes decoded\)/);
  });

  it('a corrupt or truncated stream is a body cut short, worth another try', async () => {
    const wire = gzipSync(TEXT);
    for (const bad of [
      wire.subarray(0, wire.length - 20),
      Buffer.concat([wire.subarray(0, 30), Buffer.alloc(50, 7)]),
    ]) {
      const r = await assemble(bad, { 'content-encoding': 'gzip' });
      expect(r.failed).toBeInstanceOf(NetworkError);
      expect((r.failed as NetworkError).retriable).toBe(true);
      expect(r.failed?.message).toMatch(/could not be decoded/);
    }
  });

  it('counts the limit on the bytes received too: empty gzip members without end stop there', async () => {
    const empty = gzipSync(Buffer.alloc(0));
    const members = Buffer.concat(Array.from({ length: 4096 }, () => empty));
    const r = await assemble(members, { 'content-encoding': 'gzip' }, { maxBody: 64 * 1024 });
    expect(r.failed).toBeInstanceOf(NetworkError);
    expect((r.failed as NetworkError).retriable).toBe(false);
    expect(r.failed?.message).toMatch(/response too large \(over 65536 bytes received\)/);
    // Under the limit, members (empty or not) are one body, as RFC 1952 §2.2 has it.
    const two = Buffer.concat([gzipSync(TEXT.subarray(0, 100)), empty, gzipSync(TEXT.subarray(100))]);
    expect((await assemble(two, { 'content-encoding': 'gzip' })).body?.equals(TEXT)).toBe(true);
  });

  it('refuses gzip data that decodes to nothing for over 1 MiB: a later header without end, empty members', async () => {
    const first = gzipSync(TEXT);
    const laterHeader = Buffer.concat([
      first,
      Buffer.from([0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 0xff]),
      Buffer.alloc(2 << 20, 0x41),
    ]);
    const empty = gzipSync(Buffer.alloc(0));
    const members = Buffer.concat([first, ...Array.from({ length: (2 << 20) / empty.length }, () => empty)]);
    for (const wire of [laterHeader, members]) {
      const r = await assemble(wire, { 'content-encoding': 'gzip' });
      expect(r.failed?.message).toBe(
        'the response body could not be decoded (over 1048576 bytes of its gzip data decode to nothing)',
      );
      expect((r.failed as NetworkError).retriable).toBe(false);
    }
    // Data that decodes to a little now and then is not refused: the limit on bytes received ends it instead.
    const space = gzipSync(' ');
    const sparse = Buffer.concat(Array.from({ length: 60_000 }, () => space));
    expect(sparse.length).toBeGreaterThan(1 << 20);
    expect((await assemble(sparse, { 'content-encoding': 'gzip' })).body?.equals(Buffer.alloc(60_000, ' '))).toBe(true);
  });

  it('refuses a gzip header whose file name does not end, at the header bound, not retried', async () => {
    const endless = Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 0xff]), Buffer.alloc(4 << 20, 0x41)]);
    const r = await assemble(endless, { 'content-encoding': 'gzip' });
    expect(r.failed).toBeInstanceOf(NetworkError);
    expect((r.failed as NetworkError).retriable).toBe(false);
    expect(r.failed?.message).toBe(
      'the response body could not be decoded (its gzip header does not end within 131072 bytes)',
    );
    // A header with every optional field, each of a real size, is read as zlib reads it.
    // The extra field spans several of the chunks the header arrives in.
    const extra = Buffer.alloc(2 + 2600, 7);
    extra.writeUInt16LE(2600, 0);
    const head = Buffer.concat([
      Buffer.from([0x1f, 0x8b, 8, 0x02 | 0x04 | 0x08 | 0x10, 0, 0, 0, 0, 0, 3]),
      extra,
      Buffer.from('page-0001.json\0a comment\0'),
    ]);
    const crc = Buffer.alloc(2);
    crc.writeUInt16LE(crc32(head) & 0xffff, 0);
    const full = Buffer.concat([head, crc, gzipSync(TEXT).subarray(10)]);
    expect((await assemble(full, { 'content-encoding': 'gzip' })).body?.equals(TEXT)).toBe(true);
  });

  it('waits while the decoder is full: write says so, and calls back when there is room', async () => {
    const sink = createBodySink({ headers: { 'content-encoding': 'gzip' }, accepted: 'gzip, br', fail() {} });
    const text = randomBytes(4 << 20);
    const wire = gzipSync(text);
    let waits = 0;
    for (let at = 0; at < wire.length; at += 64 * 1024) {
      let resumed = (): void => {};
      const room = new Promise<void>((r) => (resumed = r));
      if (!sink.write(wire.subarray(at, at + 64 * 1024), resumed)) {
        waits++;
        await room;
      }
    }
    expect(waits).toBeGreaterThan(0);
    expect((await sink.end()).equals(text)).toBe(true);
  });

  it('undoes stacked codings from the last listed (RFC 9110 §8.4)', async () => {
    const twice = gzipSync(gzipSync(TEXT));
    expect((await assemble(twice, { 'content-encoding': 'gzip, gzip' })).body?.equals(TEXT)).toBe(true);
    const gzThenBr = brotliCompressSync(gzipSync(TEXT));
    expect((await assemble(gzThenBr, { 'content-encoding': 'gzip,br' })).body?.equals(TEXT)).toBe(true);
    expect((await assemble(gzipSync(TEXT), { 'content-encoding': 'identity, gzip' })).body?.equals(TEXT)).toBe(true);
    // The inner stream is held to the same limit as the outer one.
    const bomb = gzipSync(gzipSync(Buffer.alloc(8 << 20)));
    const r = await assemble(bomb, { 'content-encoding': 'gzip, gzip' }, { maxBody: 1 << 20 });
    expect(r.failed?.message).toMatch(/response too large \(over 1048576 bytes decoded\)/);
  });

  it('bytes after a gzip member that are not a member fail clearly, not retried; zero padding is allowed', async () => {
    const wire = gzipSync(TEXT);
    for (const tail of [Buffer.from('garbage'), Buffer.from([0x1f, 0x8b, 0, 0, 0, 0, 0, 0, 0, 0])]) {
      const r = await assemble(Buffer.concat([wire, tail]), { 'content-encoding': 'gzip' });
      expect(r.failed?.message).toBe(
        'the response body could not be decoded (bytes after its gzip data are not a gzip member)',
      );
      expect((r.failed as NetworkError).retriable).toBe(false);
    }
    const padded = await assemble(Buffer.concat([wire, Buffer.alloc(512)]), { 'content-encoding': 'gzip' });
    expect(padded.body?.equals(TEXT)).toBe(true);
  });

  it('a declared length over the limit is refused before any byte', () => {
    expect(() =>
      createBodySink({ headers: { 'content-length': '2000' }, accepted: 'gzip', maxBody: 1000, fail() {} }),
    ).toThrow(/response too large \(2000 bytes\)/);
  });
});

describe('content codings', () => {
  it('a coding that was not asked for is the server breaking the contract (exit 5), named', () => {
    for (const [coding, accepted] of [
      ['x-snappy', 'gzip, br'],
      ['gzip', 'identity'],
      ['br', 'identity'],
      ['gzip, x-snappy', 'gzip, br'],
      ['x-snappy, gzip', 'gzip, br'],
    ] as const) {
      let err: unknown;
      try {
        decodersFor(coding, accepted);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(IdcliError);
      expect((err as IdcliError).exitCode).toBe(5);
      expect((err as IdcliError).code).toBe('CONTRACT_CODING_UNASKED');
      expect((err as IdcliError).message).toContain(
        `content coding 'x-snappy'`.replace('x-snappy', coding.includes(',') ? 'x-snappy' : coding),
      );
      // The hint offers IDCLI_HTTP_COMPRESSION=0 only to someone who has not set it.
      expect((err as IdcliError).hint?.includes('IDCLI_HTTP_COMPRESSION=0')).toBe(accepted !== 'identity');
    }
    expect(() => decodersFor('gzip, gzip, gzip, gzip', 'gzip, br')).toThrow(
      expect.objectContaining({ code: 'CONTRACT_TOO_MANY_CODINGS', exitCode: 5 }),
    );
    expect(decodersFor('identity', 'identity')).toBeUndefined();
    expect(decodersFor('gzip, gzip', 'gzip, br')?.map((d) => d.coding)).toEqual(['gzip', 'gzip']);
    expect(decodersFor('gzip, br', 'gzip, br')?.map((d) => d.coding)).toEqual(['br', 'gzip']);
    expect(decodersFor(undefined, 'gzip, br')).toBeUndefined();
  });

  it('asks for gzip and br (zstd first where Node decodes it), or identity when told', () => {
    expect(acceptEncoding(true)).toMatch(/^(zstd, )?gzip, br$/);
    expect(acceptEncoding(false)).toBe('identity');
    expect(compressionWanted({})).toBe(true);
    expect(compressionWanted({ IDCLI_HTTP_COMPRESSION: '0' })).toBe(false);
    expect(compressionWanted({ IDCLI_HTTP_COMPRESSION: '1' })).toBe(true);
    expect(() => compressionWanted({ IDCLI_HTTP_COMPRESSION: 'yes' })).toThrow(
      expect.objectContaining({ code: 'SETTING_INVALID', exitCode: 2 }),
    );
  });
});

describe('gzipHeaderLength (RFC 1952 §2.3)', () => {
  const fixed = (flags: number): Buffer => Buffer.from([0x1f, 0x8b, 8, flags, 0, 0, 0, 0, 0, 3]);

  it('measures the fixed part and each optional field, and waits for the bytes it lacks', () => {
    expect(gzipHeaderLength(fixed(0))).toBe(10);
    expect(gzipHeaderLength(fixed(0).subarray(0, 9))).toBeUndefined();
    expect(gzipHeaderLength(Buffer.concat([fixed(0x08), Buffer.from('name')]))).toBeUndefined();
    expect(gzipHeaderLength(Buffer.concat([fixed(0x08 | 0x10), Buffer.from('name\0note\0')]))).toBe(20);
    expect(gzipHeaderLength(Buffer.concat([fixed(0x04), Buffer.from([3, 0, 1, 2, 3])]))).toBe(15);
    expect(gzipHeaderLength(Buffer.concat([fixed(0x04), Buffer.from([3, 0, 1])]))).toBeUndefined();
    expect(gzipHeaderLength(Buffer.concat([fixed(0x02), Buffer.from([0xaa])]))).toBeUndefined();
    expect(gzipHeaderLength(Buffer.concat([fixed(0x02), Buffer.from([0xaa, 0xbb])]))).toBe(12);
  });

  it('tells a body that does not start as zlib reads gzip: magic, method, reserved flags', () => {
    expect(gzipHeaderLength(Buffer.from('{"items":[]}'))).toBe(false);
    expect(gzipHeaderLength(Buffer.from([0x1f, 0x8b, 7]))).toBe(false);
    expect(gzipHeaderLength(fixed(0x20))).toBe(false);
    expect(gzipHeaderLength(Buffer.from([0x1f]))).toBeUndefined();
  });

  it('the check refuses a header past its limit, and costs nothing once the header has ended', () => {
    const check = new GzipHeaderCheck(64);
    expect(check.feed(fixed(0x08))).toBe(true);
    expect(check.feed(Buffer.alloc(50, 0x41))).toBe(true);
    expect(check.feed(Buffer.alloc(10, 0x41))).toBe(false);
    const ok = new GzipHeaderCheck(64);
    expect(ok.feed(Buffer.concat([fixed(0x08), Buffer.from('n\0'), Buffer.alloc(1000)]))).toBe(true);
    expect(ok.state).toBe('valid');
    expect(ok.feed(Buffer.alloc(1000, 0x41))).toBe(true);
  });
});

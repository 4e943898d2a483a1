import { brotliCompressSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createBodySink } from '../../src/http/body.js';
import { acceptEncoding, compressionWanted, decoderFor } from '../../src/http/content-coding.js';
import { IdcliError } from '../../src/errors.js';
import { NetworkError } from '../../src/http/types.js';

const TEXT = Buffer.from('{"items":[{"id":90071992547409931,"s":"caf\\u00e9"}]}'.repeat(200));

/** Feeds `wire` to a sink in small chunks, as a socket would, and returns its body or its failure. */
async function assemble(
  wire: Buffer,
  headers: Record<string, string>,
  opts: { maxBody?: number; accepted?: string } = {},
): Promise<{ body?: Buffer; failed?: Error }> {
  const failures: Error[] = [];
  const sink = createBodySink({
    headers,
    accepted: 'accepted' in opts ? opts.accepted : 'gzip, br',
    maxBody: opts.maxBody,
    fail: (err) => failures.push(err),
  });
  for (let at = 0; at < wire.length; at += 1000) sink.write(wire.subarray(at, at + 1000));
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
    ] as const) {
      let err: unknown;
      try {
        decoderFor(coding, accepted);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(IdcliError);
      expect((err as IdcliError).exitCode).toBe(5);
      expect((err as IdcliError).message).toContain(`'${coding}'`);
    }
    expect(decoderFor('identity', 'identity')).toBeUndefined();
    expect(decoderFor(undefined, 'gzip, br')).toBeUndefined();
  });

  it('asks for gzip and br (zstd first where Node decodes it), or identity when told', () => {
    expect(acceptEncoding(true)).toMatch(/^(zstd, )?gzip, br$/);
    expect(acceptEncoding(false)).toBe('identity');
    expect(compressionWanted({})).toBe(true);
    expect(compressionWanted({ IDCLI_HTTP_COMPRESSION: '0' })).toBe(false);
    expect(compressionWanted({ IDCLI_HTTP_COMPRESSION: '1' })).toBe(true);
    expect(() => compressionWanted({ IDCLI_HTTP_COMPRESSION: 'yes' })).toThrow(/must be 0 or 1/);
  });
});

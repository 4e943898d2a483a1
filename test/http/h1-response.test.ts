import { describe, expect, it } from 'vitest';
import { createResponseParser, ProtocolError, type ResponseHead } from '../../src/http/h1-response.js';

interface Parsed {
  head: ResponseHead | undefined;
  body: string;
  /** Index just past the response in the whole input, or -1 when it never completed. */
  end: number;
  /** What eof() said after the last piece (only asked when the response was not complete). */
  completedByEof: boolean;
}

/**
 * Feeds `raw` in pieces cut at `cuts`, through ONE reused buffer that is scribbled over between pieces,
 * as a connection's read buffer is: the parser must not keep references into it.
 */
function parse(
  raw: string,
  cuts: number[] = [],
  opts: { noBody?: boolean; eof?: boolean; maxHeadBytes?: number } = {},
): Parsed {
  const bytes = Buffer.from(raw, 'latin1');
  const reused = Buffer.alloc(bytes.length + 8);
  let head: ResponseHead | undefined;
  const body: Buffer[] = [];
  const parser = createResponseParser(
    {
      head: (h) => {
        head = h;
      },
      body: (buf, start, end) => body.push(Buffer.from(buf.subarray(start, end))),
    },
    { maxHeadBytes: opts.maxHeadBytes ?? 64 * 1024 },
    opts.noBody,
  );
  const bounds = [0, ...cuts, bytes.length];
  let end = -1;
  for (let k = 0; k + 1 < bounds.length && end === -1; k++) {
    const from = bounds[k] as number;
    const to = bounds[k + 1] as number;
    reused.fill(0x41);
    bytes.copy(reused, 3, from, to);
    const at = parser.execute(reused, 3, 3 + to - from);
    if (at !== -1) end = at - 3 + from;
  }
  const completedByEof = end === -1 && opts.eof === true && parser.eof();
  return { head, body: Buffer.concat(body).toString('latin1'), end, completedByEof };
}

/** Every way of cutting `raw` in two, plus byte by byte: all must give the same result. */
function everySplit(raw: string, opts: Parameters<typeof parse>[2] = {}): Parsed {
  const whole = parse(raw, [], opts);
  for (let c = 1; c < raw.length; c++) expect(parse(raw, [c], opts)).toEqual(whole);
  expect(
    parse(
      raw,
      Array.from({ length: raw.length - 1 }, (_, i) => i + 1),
      opts,
    ),
  ).toEqual(whole);
  return whole;
}

function protocolError(raw: string, opts: Parameters<typeof parse>[2] = {}): string {
  try {
    parse(raw, [], opts);
  } catch (err) {
    expect(err).toBeInstanceOf(ProtocolError);
    return (err as Error).message;
  }
  throw new Error('no ProtocolError');
}

describe('HTTP/1.1 response parser', () => {
  it('reads a Content-Length body, however the bytes arrive, and says where the response ends', () => {
    const raw = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{"a":"\u00e9b"}';
    const r = everySplit(`${raw}`);
    expect(r.head).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json', 'content-length': '10' },
      keepAlive: true,
      length: 10,
    });
    expect(r.body).toBe('{"a":"\u00e9b"}');
    expect(r.end).toBe(raw.length);
    // Bytes after the response are not consumed: the caller sees them and drops the connection.
    expect(parse(`${raw}HTTP/1.1 200`).end).toBe(raw.length);
  });

  it('decodes chunked bodies with extensions and trailers, with CRLF or lone LF line ends', () => {
    const raw =
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n1 ; x\r\n,\r\nB\r\n 0123456789\r\n0\r\nServer-Timing: x\r\n\r\n';
    const r = everySplit(raw);
    expect(r.body).toBe('hello, 0123456789');
    expect(r.head?.length).toBeUndefined();
    expect(r.head?.keepAlive).toBe(true);
    expect(r.end).toBe(raw.length);
    const lf = everySplit('HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n0\n\n');
    expect(lf.body).toBe('abc');
    expect(lf.end).toBeGreaterThan(0);
  });

  it('skips interim 1xx responses', () => {
    const raw =
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok';
    const r = everySplit(raw);
    expect(r.head?.status).toBe(201);
    expect(r.head?.headers).toEqual({ 'content-length': '2' });
    expect(r.body).toBe('ok');
    expect(protocolError('HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n')).toMatch(/101/);
  });

  it('has no body for 204, 304 and a HEAD request, whatever the headers say', () => {
    for (const status of [204, 304]) {
      const raw = `HTTP/1.1 ${status} X\r\nContent-Length: 10\r\n\r\n`;
      expect(parse(raw)).toMatchObject({ head: { length: 0 }, body: '', end: raw.length });
    }
    const head = 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n';
    expect(parse(head, [], { noBody: true })).toMatchObject({ head: { length: 0 }, body: '', end: head.length });
  });

  it('reads a body without framing until the close, and never keeps that connection', () => {
    const raw = 'HTTP/1.1 200 OK\r\n\r\nall of it';
    const r = parse(raw, [25], { eof: true });
    expect(r).toMatchObject({ body: 'all of it', end: -1, completedByEof: true });
    expect(r.head?.keepAlive).toBe(false);
    // A Content-Length body cut short is not completed by the close.
    expect(parse('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab', [], { eof: true }).completedByEof).toBe(false);
    expect(
      parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab', [], { eof: true }).completedByEof,
    ).toBe(false);
  });

  it('keeps HTTP/1.1 connections unless told to close; HTTP/1.0 ones only when told to keep them', () => {
    const keep = (raw: string): boolean | undefined => parse(`${raw}Content-Length: 0\r\n\r\n`).head?.keepAlive;
    expect(keep('HTTP/1.1 200 OK\r\n')).toBe(true);
    expect(keep('HTTP/1.1 200 OK\r\nConnection: Close\r\n')).toBe(false);
    expect(keep('HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\n')).toBe(false);
    expect(keep('HTTP/1.0 200 OK\r\n')).toBe(false);
    expect(keep('HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n')).toBe(true);
  });

  it('folds duplicate fields as Node does and unfolds obs-fold', () => {
    const r = parse(
      'HTTP/1.1 200\r\nSet-Cookie: a=1\r\nset-cookie: b=2\r\nVary: accept\r\nVary: origin\r\nContent-Type: a/b\r\nContent-Type: c/d\r\nX-Long: one\r\n  two\r\nContent-Length: 0\r\n\r\n',
    );
    expect(r.head?.status).toBe(200);
    expect(r.head?.headers).toEqual({
      'set-cookie': ['a=1', 'b=2'],
      vary: 'accept, origin',
      'content-type': 'a/b',
      'x-long': 'one two',
      'content-length': '0',
    });
  });

  it('accepts a list of identical Content-Length values and refuses differing ones', () => {
    expect(parse('HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nok').body).toBe('ok');
    expect(protocolError('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok')).toMatch(
      /Content-Length/,
    );
    expect(protocolError('HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n')).toMatch(/Content-Length/);
    expect(protocolError('HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n')).toMatch(/Content-Length/);
  });

  it('lets chunked framing win over Content-Length, and then never reuses the connection', () => {
    const r = parse('HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n');
    expect(r.body).toBe('ok');
    expect(r.head?.keepAlive).toBe(false);
  });

  it('refuses what it cannot frame or trust', () => {
    expect(protocolError('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n')).toMatch(/transfer coding/);
    expect(protocolError('HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n')).toMatch(/transfer coding/);
    expect(protocolError('HTTP/2 200\r\n\r\n')).toMatch(/status line/);
    expect(protocolError('HTTP/1.1 20 OK\r\n\r\n')).toMatch(/status line/);
    expect(protocolError('ICY 200 OK\r\n\r\n')).toMatch(/status line/);
    expect(protocolError('HTTP/1.1 200 OK\r\nno colon\r\n\r\n')).toMatch(/header field/);
    expect(protocolError('HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n')).toMatch(/header field/);
    expect(protocolError('HTTP/1.1 200 OK\r\n: x\r\n\r\n')).toMatch(/header field/);
    expect(protocolError('HTTP/1.1 200 OK\r\nX: a\0b\r\n\r\n')).toMatch(/header field/);
    expect(protocolError('HTTP/1.1 200 OK\r\n folded first\r\n\r\n')).toMatch(/header field/);
    const chunked = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
    expect(protocolError(`${chunked}zz\r\n`)).toMatch(/chunk size/);
    expect(protocolError(`${chunked}-1\r\n`)).toMatch(/chunk size/);
    expect(protocolError(`${chunked}1000000000000\r\n`)).toMatch(/chunk size/);
    expect(protocolError(`${chunked}2\r\nokX\r\n`)).toMatch(/line break/);
    expect(protocolError(`${chunked}0\r\nnot a field\r\n\r\n`)).toMatch(/trailer/);
  });

  it('bounds the head and the chunk framing it will buffer', () => {
    const big = `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(2000)}\r\n\r\n`;
    expect(protocolError(big, { maxHeadBytes: 1024 })).toMatch(/head too large/);
    // Cut into pieces too: the limit counts what is buffered across reads.
    expect(() => parse(big, [100, 600, 1100], { maxHeadBytes: 1024 })).toThrow(/head too large/);
    expect(parse(big, [], { maxHeadBytes: 4096 }).head?.status).toBe(200);
    const ext = `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;${'x'.repeat(2000)}\r\n`;
    expect(protocolError(ext, { maxHeadBytes: 1024 })).toMatch(/too large/);
  });
});

// Bodies for the coding faults: a coding the client did not ask for, a gzip bomb and a corrupt gzip stream.
import { constants, crc32, deflateRawSync, gzipSync } from 'node:zlib';
import { encode } from './compression.js';
import type { Reply } from './http-io.js';
import type { Fault } from './types.js';

export type CodingFault = Fault & { kind: 'encoding' | 'gzip-bomb' | 'corrupt-gzip' };

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]); // deflate, no name, mtime 0, OS unknown

/**
 * The body labelled with `coding`: gzip and br are really encoded, any other coding leaves the bytes as they are.
 * A list (`gzip, br`) is applied in the order it names, as RFC 9110 §8.4 has it.
 */
export async function encodeAs(body: Buffer, coding: string): Promise<Buffer> {
  let out = body;
  for (const c of coding.split(',').map((s) => s.trim().toLowerCase())) {
    if (c === 'gzip' || c === 'br') out = await encode(out, c);
  }
  return out;
}

/**
 * A valid gzip stream that inflates to `inflated` zero bytes, as chunks that share their storage. Each MiB of
 * zeros is deflated once with a full flush, which resets the window, so every full MiB encodes to the same bytes
 * and the stream is that block repeated: the inflated body never exists anywhere, only its CRC is computed.
 */
export function gzipBomb(inflated: number): Buffer[] {
  if (!Number.isSafeInteger(inflated) || inflated < 1) throw new Error('inflatedBytes must be a positive integer');
  const zeros = Buffer.alloc(Math.min(MiB, inflated));
  const block = (n: number) => deflateRawSync(zeros.subarray(0, n), { finishFlush: constants.Z_FULL_FLUSH });
  const whole = Math.floor(inflated / MiB);
  const rest = inflated % MiB;
  const chunks: Buffer[] = [GZIP_HEADER];
  let crc = 0;
  if (whole > 0) {
    const full = block(MiB);
    for (let i = 0; i < whole; i++) {
      chunks.push(full);
      crc = crc32(zeros, crc);
    }
  }
  if (rest > 0) {
    chunks.push(block(rest));
    crc = crc32(zeros.subarray(0, rest), crc);
  }
  chunks.push(deflateRawSync(Buffer.alloc(0))); // the final, empty block
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(inflated % 2 ** 32, 4); // ISIZE is the length modulo 2^32 (RFC 1952)
  chunks.push(trailer);
  return chunks;
}

/**
 * A gzip stream whose first half of `body` decodes, then breaks: after a sync flush the next byte opens a deflate
 * block of the reserved type 3 (RFC 1951 §3.2.3), which every inflater refuses. The stream then runs on with
 * bytes that look like a trailer, as a damaged body would.
 */
export function corruptGzip(body: Buffer): Buffer {
  const start = gzipSync(body.subarray(0, Math.floor(body.length / 2)), { finishFlush: constants.Z_SYNC_FLUSH });
  return Buffer.concat([start, Buffer.from([0x07]), Buffer.alloc(8, 0xa5)]);
}

/** gzip bombs by inflated size, each built once: its CRC alone reads a GiB of zeros. */
export class Bombs {
  private readonly built = new Map<number, Buffer[]>();

  get(inflated: number): Buffer[] {
    let chunks = this.built.get(inflated);
    if (!chunks) {
      chunks = gzipBomb(inflated);
      this.built.set(inflated, chunks);
    }
    return chunks;
  }
}

/** The endpoint's reply, its status and headers kept, its body replaced as the fault says and labelled so. */
export async function withCodingFault(reply: Reply, fault: CodingFault, bombs: Bombs): Promise<Reply> {
  const raw = Buffer.concat([reply.body ?? []].flat().map((b) => Buffer.from(b)));
  const labelled = (coding: string, body: Buffer | Buffer[]): Reply => ({
    status: reply.status,
    headers: { ...reply.headers, 'content-encoding': coding },
    body,
  });
  switch (fault.kind) {
    case 'encoding':
      return labelled(fault.coding, await encodeAs(raw, fault.coding));
    case 'gzip-bomb':
      return labelled('gzip', bombs.get(fault.inflatedBytes ?? GiB));
    case 'corrupt-gzip':
      return labelled('gzip', corruptGzip(raw));
  }
}

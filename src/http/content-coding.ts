// Compressed transfer (RFC 9110 §8.4, §12.5.3). As in Go's HTTP client, only a caller that set no Accept-Encoding
// gets bodies decoded: one that asks for a coding itself gets the bytes as sent.
import type { Transform } from 'node:stream';
import { type ErrorCode, ExitCode, IdcliError } from '../errors.js';
import { clip, printable } from '../printable.js';
import { MAX_CONTENT_CODINGS } from './limits.js';

type Zlib = typeof import('node:zlib');
/** zstd joined node:zlib in Node 22.15 and 23.8; older runtimes neither ask for it nor decode it. */
type ZstdZlib = Zlib & {
  createZstdDecompress?: (options?: { chunkSize?: number; writableHighWaterMark?: number }) => Decoder;
};
type Decoder = Transform & { readonly bytesWritten: number };

/** zlib's default of 16 KiB costs a trip to the thread pool per 16 KiB; a page-sized chunk takes a few. */
const DECODED_CHUNK = 256 * 1024;
/** A few socket reads: the next is at hand while the socket waits, and a fast server fills no memory. */
const QUEUED_INPUT = 256 * 1024;

const zlib = (): ZstdZlib => process.getBuiltinModule('node:zlib');

export function acceptEncoding(compress: boolean): string {
  if (!compress) return 'identity';
  return typeof zlib().createZstdDecompress === 'function' ? 'zstd, gzip, br' : 'gzip, br';
}

export interface Decoding {
  coding: 'gzip' | 'br' | 'zstd';
  decoder: Decoder;
}

/** The decoders, last coding first (RFC 9110 §8.4); a coding not asked for, or too many, is exit 5, not retried. */
export function decodersFor(contentEncoding: string | undefined, accepted: string): Decoding[] | undefined {
  const listed = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    // identity is no coding at all, and RFC 9110 §5.6.1 lets a list carry empty elements.
    .filter((c) => c !== '' && c !== 'identity');
  if (listed.length === 0) return undefined;
  const asked = new Set(accepted.split(', '));
  const z = zlib();
  const codings = listed.map((c) => {
    // RFC 9110 §8.4.1.3: x-gzip is gzip.
    const name = c === 'x-gzip' ? 'gzip' : c;
    const known = name === 'gzip' || name === 'br' || (name === 'zstd' && z.createZstdDecompress !== undefined);
    if (!known || !asked.has(name))
      throw contractError(
        'CONTRACT_CODING_UNASKED',
        `the response is in content coding '${clip(printable(c), 40)}', which idcli did not ask for (Accept-Encoding: ${accepted})`,
        accepted,
      );
    return name;
  });
  if (codings.length > MAX_CONTENT_CODINGS)
    throw contractError(
      'CONTRACT_TOO_MANY_CODINGS',
      `the response is in ${codings.length} content codings one over the other ('${clip(printable(contentEncoding ?? ''), 60)}'); idcli decodes at most ${MAX_CONTENT_CODINGS}`,
      accepted,
    );
  const options = { chunkSize: DECODED_CHUNK, writableHighWaterMark: QUEUED_INPUT };
  return codings.reverse().map((coding) => ({
    coding,
    decoder:
      coding === 'gzip'
        ? z.createGunzip(options)
        : coding === 'br'
          ? z.createBrotliDecompress(options)
          : z.createZstdDecompress!(options), // `known` checked it is there
  }));
}

function contractError(code: ErrorCode, message: string, accepted: string): IdcliError {
  // With IDCLI_HTTP_COMPRESSION=0 already set, only the service can help.
  const more = accepted === acceptEncoding(false) ? '' : '; IDCLI_HTTP_COMPRESSION=0 asks for uncompressed bodies';
  return new IdcliError(code, message, ExitCode.CONTRACT, { hint: `report it to the service${more}` });
}

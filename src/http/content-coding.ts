/**
 * Compressed transfer (RFC 9110 §8.4 and §12.5.3): what idcli asks servers for, and the decoder for what one sends.
 * JSON collections shrink several times under gzip or br, so over a real link the coding decides how long a dump
 * takes. As in Go's HTTP client, the transport negotiates and decodes only when the caller set no Accept-Encoding
 * of its own: a caller that asks for a coding itself gets the bytes as sent.
 */
import type { Transform } from 'node:stream';
import { ExitCode, IdcliError, usageError } from '../errors.js';
import { clip, printable } from '../printable.js';
import type { Env } from './proxy-env.js';

type Zlib = typeof import('node:zlib');
/** zstd joined node:zlib in Node 22.15 and 23.8; older runtimes neither ask for it nor decode it. */
type ZstdZlib = Zlib & { createZstdDecompress?: (options?: { chunkSize?: number }) => Transform };

/**
 * Output chunk of a decoder. zlib's default of 16 KiB makes a page of JSON cost a trip to the thread pool and an
 * event for every 16 KiB; a chunk as large as a typical page does the same work in a few (bench/list.ts shows it).
 */
const DECODED_CHUNK = 256 * 1024;

const zlib = (): ZstdZlib => process.getBuiltinModule('node:zlib') as ZstdZlib;

/**
 * IDCLI_HTTP_COMPRESSION: `0` asks for identity bodies only (a proxy or server whose compression is broken),
 * `1` or unset for compressed transfer. Anything else is a configuration error, refused before any request.
 */
export function compressionWanted(env: Env): boolean {
  const raw = env.IDCLI_HTTP_COMPRESSION?.trim() ?? '';
  if (raw === '' || raw === '1') return true;
  if (raw === '0') return false;
  throw usageError(
    `IDCLI_HTTP_COMPRESSION must be 0 or 1, not '${clip(printable(raw), 40)}'`,
    'set it to 0 for uncompressed bodies, or unset it',
  );
}

/** The Accept-Encoding the transport sends when the caller sets none. */
export function acceptEncoding(compress: boolean): string {
  if (!compress) return 'identity';
  return typeof zlib().createZstdDecompress === 'function' ? 'zstd, gzip, br' : 'gzip, br';
}

/**
 * A decoder for the response's Content-Encoding, or undefined for an identity body. A coding that was not asked
 * for is the server breaking the negotiation (exit 5, never retried: it would answer the same way again).
 */
export function decoderFor(contentEncoding: string | undefined, accepted: string): Transform | undefined {
  const coding = (contentEncoding ?? '').trim().toLowerCase();
  if (coding === '' || coding === 'identity') return undefined;
  // RFC 9110 §8.4.1.3: x-gzip is gzip.
  const name = coding === 'x-gzip' ? 'gzip' : coding;
  const asked = accepted.split(', ').includes(name);
  const z = zlib();
  const options = { chunkSize: DECODED_CHUNK };
  if (asked && name === 'gzip') return z.createGunzip(options);
  if (asked && name === 'br') return z.createBrotliDecompress(options);
  if (asked && name === 'zstd' && z.createZstdDecompress) return z.createZstdDecompress(options);
  throw new IdcliError(
    `the response is in content coding '${clip(printable(coding), 40)}', which idcli did not ask for (Accept-Encoding: ${accepted})`,
    ExitCode.CONTRACT,
    { hint: 'report it to the service; IDCLI_HTTP_COMPRESSION=0 asks for uncompressed bodies' },
  );
}

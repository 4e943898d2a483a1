// Content codings (RFC 9110 §8.4, §12.5.3): which coding a request accepts, and bodies encoded with it.
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

export type Coding = 'br' | 'gzip' | 'identity';

export type Negotiation = { coding: Coding } | { refused: 400 | 406; description: string };

/** Codings the emulator can send, in its order of preference when a request weighs them alike. */
const PREFERENCE: readonly Coding[] = ['br', 'gzip', 'identity'];

/**
 * Bodies below this size are sent as they are: compressing them costs more than it saves. Express's
 * `compression` middleware draws the same line by default.
 */
export const MIN_COMPRESSED_BODY = 1024;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

function malformed(element: string): Negotiation {
  return { refused: 400, description: `Accept-Encoding is malformed at "${element.slice(0, 40)}".` };
}

/**
 * The coding to answer a request with, from its Accept-Encoding. No header: identity. Codings weigh by their
 * q-value; `*` weighs every coding not named; identity stays acceptable unless `identity;q=0` or `*;q=0` rules it
 * out, but is chosen over a named coding only when it is named with a higher weight. A header that breaks the
 * grammar is refused (400), and so is one that rules out every coding the emulator has (406).
 */
export function negotiate(header: string | undefined): Negotiation {
  if (header === undefined) return { coding: 'identity' };
  const weights = new Map<string, number>();
  for (const element of header.split(',')) {
    const trimmed = element.trim();
    if (trimmed === '') continue; // RFC 9110 §5.6.1: empty list elements are allowed and ignored
    const [name = '', ...params] = trimmed.split(';').map((s) => s.trim());
    if (!TOKEN.test(name) || params.length > 1) return malformed(trimmed);
    let q = 1;
    if (params.length === 1) {
      const m = /^q=(.*)$/i.exec(params[0] as string);
      if (!m || !QVALUE.test(m[1] as string)) return malformed(trimmed);
      q = Number(m[1]);
    }
    const coding = name.toLowerCase() === 'x-gzip' ? 'gzip' : name.toLowerCase(); // RFC 9110 §8.4.1.3
    weights.set(coding, Math.max(weights.get(coding) ?? 0, q));
  }
  const star = weights.get('*');
  const weight = (c: Coding): number => {
    const named = weights.get(c);
    if (named !== undefined) return named;
    if (star !== undefined) return star;
    // Unnamed identity is acceptable, but only as the last resort.
    return c === 'identity' ? Number.MIN_VALUE : 0;
  };
  let best: Coding | null = null;
  for (const c of PREFERENCE) if (weight(c) > 0 && (best === null || weight(c) > weight(best))) best = c;
  if (best === null) return { refused: 406, description: 'None of br, gzip and identity is acceptable.' };
  return { coding: best };
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * The body in that coding. gzip at zlib's default level and brotli at quality 4 are what servers commonly use
 * when they compress on the fly; both run on the thread pool, so other responses keep flowing meanwhile.
 */
export function encode(body: Buffer, coding: Exclude<Coding, 'identity'>): Promise<Buffer> {
  if (coding === 'gzip') return gzipAsync(body);
  return brotliAsync(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 4,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  });
}

/**
 * Encoded bodies by the text that determines them, up to a byte budget. The emulator shares the machine with the
 * client it serves; compressing the same page again on every run would measure the emulator's CPU, not the link.
 */
export class EncodedCache {
  private readonly map = new Map<string, Buffer>();
  private bytes = 0;

  constructor(private readonly budget = 256 * 1024 * 1024) {}

  async get(key: string, coding: Exclude<Coding, 'identity'>, body: () => Buffer): Promise<Buffer> {
    const k = `${coding}\n${key}`;
    const hit = this.map.get(k);
    if (hit) return hit;
    const encoded = await encode(body(), coding);
    if (this.bytes + encoded.length <= this.budget) {
      this.map.set(k, encoded);
      this.bytes += encoded.length;
    }
    return encoded;
  }
}

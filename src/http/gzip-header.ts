// A gzip member's header (RFC 1952 §2.3): zlib reads its file name and comment for as long as they run, so a header
// that never ends would take every byte a server sends.

const FHCRC = 0x02;
const FEXTRA = 0x04;
const FNAME = 0x08;
const FCOMMENT = 0x10;
/** Bits RFC 1952 reserves; zlib refuses a header that sets any. */
const RESERVED = 0xe0;

/** The gzip header's length at the start of `b`; undefined while `b` ends inside it; false if zlib would refuse it. */
export function gzipHeaderLength(b: Buffer): number | undefined | false {
  if (b.length >= 1 && b[0] !== 0x1f) return false;
  if (b.length >= 2 && b[1] !== 0x8b) return false;
  if (b.length >= 3 && b[2] !== 8) return false;
  if (b.length < 4) return undefined;
  const flags = b.readUInt8(3);
  if (flags & RESERVED) return false;
  let at = 10; // ID1 ID2 CM FLG MTIME(4) XFL OS
  if (flags & FEXTRA) {
    if (b.length < at + 2) return undefined;
    at += 2 + b.readUInt16LE(at);
  }
  for (const field of [FNAME, FCOMMENT]) {
    if (!(flags & field)) continue;
    if (b.length <= at) return undefined;
    const nul = b.indexOf(0, at);
    if (nul < 0) return undefined;
    at = nul + 1;
  }
  if (flags & FHCRC) at += 2;
  return b.length >= at ? at : undefined;
}

/** A gzip body's first header, checked chunk by chunk; after the header, feeding costs nothing. */
export class GzipHeaderCheck {
  /** `valid` once the header has ended well; `invalid` when the body is not gzip as zlib reads it (zlib says how). */
  state: 'open' | 'valid' | 'invalid' = 'open';
  private head = Buffer.alloc(0);

  constructor(private readonly limit: number) {}

  /** Takes the next bytes of the body; false when the header has run past the limit without ending. */
  feed(chunk: Buffer): boolean {
    if (this.state !== 'open') return true;
    this.head = Buffer.concat([this.head, chunk.subarray(0, this.limit + 1 - this.head.length)]);
    const length = gzipHeaderLength(this.head);
    if (length === undefined) return this.head.length <= this.limit;
    if (length !== false && length > this.limit) return false;
    this.state = length === false ? 'invalid' : 'valid';
    this.head = Buffer.alloc(0);
    return true;
  }
}

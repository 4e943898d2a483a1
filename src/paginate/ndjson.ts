import { BACKSLASH, type ItemSpans, QUOTE } from './json-scan.js';

const NEWLINE = 0x0a;

/**
 * Turns the first `count` items of a scanned page into NDJSON: each item's bytes exactly as received,
 * minus insignificant whitespace, one per line, each line ending in "\n".
 *
 * Works IN PLACE on the page buffer and returns a view of it: every item moves left (its output is never
 * longer than its input and the newline takes the place of at least the separating comma), so copying
 * forwards never overwrites bytes not yet read. For the common compact page this means no allocation and
 * no copy at all, only the separators rewritten. The envelope members must have been read before this.
 */
export function buildNdjsonInPlace(buf: Buffer, items: ItemSpans, count: number): Buffer {
  const n = Math.min(count, items.count);
  if (n === 0) return buf.subarray(0, 0);
  const bounds = items.bounds;
  const base = bounds[0]!;
  let out = base;
  for (let i = 0; i < n; i++) {
    const s = bounds[2 * i]!;
    const e = bounds[2 * i + 1]!;
    if (e < 0) out = minifyInto(buf, s, ~e, out);
    else {
      if (out !== s) buf.copyWithin(out, s, e);
      out += e - s;
    }
    // The byte at the item's end is the separator or the closing bracket, both already consumed, so it
    // is free to overwrite.
    buf[out++] = NEWLINE;
  }
  return buf.subarray(base, out);
}

/**
 * Copies buf[start, end) to buf[out...] dropping whitespace outside strings; out <= start.
 * The range was validated by the scanner, so strings are well-formed.
 */
function minifyInto(buf: Buffer, start: number, end: number, out: number): number {
  let r = start;
  let w = out;
  while (r < end) {
    const c = buf[r]!;
    if (c === QUOTE) {
      // Copy the whole string, escapes included, verbatim.
      buf[w++] = c;
      r++;
      for (;;) {
        const d = buf[r]!;
        if (d === BACKSLASH) {
          buf[w++] = d;
          buf[w++] = buf[r + 1]!;
          r += 2;
          continue;
        }
        buf[w++] = d;
        r++;
        if (d === QUOTE) break;
      }
    } else if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) r++;
    else {
      buf[w++] = c;
      r++;
    }
  }
  return w;
}

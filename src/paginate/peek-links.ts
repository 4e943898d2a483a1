/**
 * Reads `links` of a page from its END (where servers usually put it), so the next request is on the wire while this
 * page is validated. Sound for valid JSON: a '"' is a delimiter exactly when an even run of backslashes precedes it
 * (RFC 8259 §7). On invalid JSON it may be wrong; the forward scan that always follows catches that: a head start only.
 */
import { BACKSLASH, isWs, QUOTE } from './json-scan.js';
import { isJsonObject } from '../shape.js';

function skipWsBack(buf: Buffer, from: number): number {
  let p = from;
  while (p >= 0 && isWs(buf[p])) p--;
  return p;
}

/** Given the index of a closing quote, the index of its opening quote (or -1). */
function stringStart(buf: Buffer, close: number): number {
  let p = close - 1;
  for (;;) {
    const q = buf.lastIndexOf(QUOTE, p);
    if (q < 0) return -1;
    let slashes = 0;
    while (buf[q - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q;
    p = q - 1;
  }
}

export interface PeekedLinks {
  /** links.next as given, when present as a string or an object with a string href. */
  next?: string;
  self?: string;
}

/** The page's links when `links` is the last member and well-formed; undefined when not told cheaply (scan first). */
export function peekLinks(buf: Buffer): PeekedLinks | undefined {
  let p = skipWsBack(buf, buf.length - 1);
  if (buf[p] !== 0x7d) return undefined;
  p = skipWsBack(buf, p - 1);
  if (buf[p] !== 0x7d) return undefined;
  const valueEnd = p + 1;
  let depth = 0;
  for (; p >= 0; p--) {
    const b = buf[p];
    if (b === QUOTE) {
      p = stringStart(buf, p);
      if (p < 0) return undefined;
    } else if (b === 0x7d || b === 0x5d) depth++;
    else if (b === 0x7b || b === 0x5b) {
      depth--;
      if (depth === 0) break;
    }
  }
  if (p < 0) return undefined;
  const valueStart = p;
  p = skipWsBack(buf, p - 1);
  if (buf[p] !== 0x3a) return undefined;
  p = skipWsBack(buf, p - 1);
  if (buf[p] !== QUOTE) return undefined;
  const keyEnd = p + 1;
  const keyStart = stringStart(buf, p);
  if (keyStart < 0) return undefined;
  p = skipWsBack(buf, keyStart - 1);
  if (buf[p] !== 0x2c && buf[p] !== 0x7b) return undefined;
  let links: unknown;
  try {
    if (JSON.parse(buf.toString('utf8', keyStart, keyEnd)) !== 'links') return undefined;
    links = JSON.parse(buf.toString('utf8', valueStart, valueEnd));
  } catch {
    return undefined;
  }
  if (!isJsonObject(links)) return undefined;
  const next = linkHref(links, 'next');
  // A malformed self (null) is left to the full scan to report, as a malformed next is.
  return next === null ? undefined : { next, self: linkHref(links, 'self') ?? undefined };
}

/**
 * A link member: `{ "href": "<url>" }` or a plain string (docs/cli.md, "list"); undefined when absent, null in any
 * other shape, `null` included: a missing link is omitted, and reading null as the end could truncate the output.
 */
export function linkHref(links: Record<string, unknown>, name: string): string | undefined | null {
  if (!Object.hasOwn(links, name)) return undefined;
  const v = links[name];
  const h = isJsonObject(v) ? v['href'] : v;
  return typeof h === 'string' && h.trim() !== '' ? h : null;
}

/**
 * A validating byte scanner for one page of JSON (RFC 8259). It never builds values: it checks the
 * grammar over the raw UTF-8 bytes and reports where things are, so items can be copied out exactly as
 * the server spelled them (big integers, number spelling, escapes and key order all survive, which
 * JSON.parse + JSON.stringify would lose). JSON's structural characters are all ASCII and UTF-8 never
 * uses ASCII bytes inside a multi-byte sequence, so scanning bytes without decoding is sound.
 */

export class JsonSyntaxError extends Error {
  /** Byte offset of the problem in the page. */
  readonly offset: number;
  constructor(reason: string, offset: number) {
    super(`${reason} at byte ${offset}`);
    this.name = 'JsonSyntaxError';
    this.offset = offset;
  }
}

export interface Span {
  start: number;
  end: number;
}

export interface ItemSpans {
  /**
   * Two int32 per element of `items`: bounds[2i] is where element i starts and bounds[2i+1] where it
   * ends (exclusive), stored as ~end (negative) when the element holds whitespace outside strings that
   * must be removed. May be longer than 2 * count (a reused table).
   */
  bounds: Int32Array;
  count: number;
  /** Index of the first element that is not a JSON object, or -1. */
  firstNonObject: number;
}

/**
 * A span table reused from page to page. Per-item JS arrays were most of what a long walk allocated,
 * and that churn is what made V8 grow its young generation: with one table memory stays flat.
 * A page's spans are valid until the next page is scanned with the same table.
 */
export interface SpanTable {
  bounds: Int32Array;
}

export function createSpanTable(): SpanTable {
  return { bounds: new Int32Array(4096) };
}

/** [start, end) of element i and whether it needs minifying. */
export function itemSpan(spans: ItemSpans, i: number): { start: number; end: number; dirty: boolean } {
  const start = spans.bounds[2 * i]!;
  const e = spans.bounds[2 * i + 1]!;
  return e < 0 ? { start, end: ~e, dirty: true } : { start, end: e, dirty: false };
}

export interface ScannedPage {
  /** Raw value spans of the top-level members, by decoded key. `items` is here too. */
  members: Map<string, Span>;
  /** Keys that occurred more than once at the top level. */
  duplicates: Set<string>;
  /** Set when the `items` member is an array. */
  items?: ItemSpans;
  /** The top-level value was not an object (members is then empty). */
  notAnObject: boolean;
}

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

export function isWs(c: number | undefined): boolean {
  // One compare in the usual case: structural characters and the first bytes of values are all above 0x20.
  return c !== undefined && c <= 0x20 && (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09);
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= ZERO && c <= NINE;
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= ZERO && c <= NINE) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
}

function fail(reason: string, at: number, len: number): never {
  throw new JsonSyntaxError(at >= len ? 'unexpected end of JSON' : reason, at);
}

/** Escapes allowed after a backslash (RFC 8259 §7), besides \u. */
const SIMPLE_ESCAPES = new Set([QUOTE, BACKSLASH, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);

/** Bytes that end the fast path inside a string: '"', '\\' and control characters (invalid unescaped). */
const STRING_STOP = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STRING_STOP[c] = 1;
STRING_STOP[QUOTE] = 1;
STRING_STOP[BACKSLASH] = 1;

const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

/**
 * Scans a string whose opening quote is at pos; returns the index after the closing quote. `words` views
 * the same bytes as `buf`.
 */
function scanString(buf: Buffer, words: DataView, pos: number, len: number): number {
  let p = pos + 1;
  for (;;) {
    // Hot loop (most of a page is string content): four bytes per step while none of them is '"', '\\' or
    // a control byte, tested together with the classic SWAR tricks ("has a zero byte" on the word XORed
    // with the quote/backslash pattern, "has a byte below 0x20"); both are exact as yes/no answers, and
    // on a yes the byte loop below finds which byte it was. bench/list.ts measures what it buys.
    while (p + 4 <= len) {
      const v = words.getInt32(p, true);
      const q = v ^ 0x22222222;
      const b = v ^ 0x5c5c5c5c;
      if ((((v - 0x20202020) & ~v) | ((q - 0x01010101) & ~q) | ((b - 0x01010101) & ~b)) & 0x80808080) break;
      p += 4;
    }
    while (p < len && STRING_STOP[buf[p]!] === 0) p++;
    if (p >= len) fail('unterminated string', p, len);
    const c = buf[p]!;
    if (c === QUOTE) return p + 1;
    if (c === BACKSLASH) {
      const e = buf[p + 1];
      if (e !== undefined && SIMPLE_ESCAPES.has(e)) p += 2;
      else if (e === 0x75 && isHex(buf[p + 2]) && isHex(buf[p + 3]) && isHex(buf[p + 4]) && isHex(buf[p + 5])) p += 6;
      else fail('invalid escape in string', p, len);
    } else fail('control character in string', p, len);
  }
}

/** Scans a number at pos (RFC 8259 §6 grammar); returns the index after it. */
function scanNumber(buf: Buffer, pos: number, len: number): number {
  let p = pos;
  if (buf[p] === MINUS) p++;
  if (buf[p] === ZERO) p++;
  else if (isDigit(buf[p])) while (isDigit(buf[p])) p++;
  else fail('invalid number', p, len);
  if (buf[p] === DOT) {
    p++;
    if (!isDigit(buf[p])) fail('invalid number', p, len);
    while (isDigit(buf[p])) p++;
  }
  if (buf[p] === 0x65 || buf[p] === 0x45) {
    p++;
    if (buf[p] === 0x2b || buf[p] === MINUS) p++;
    if (!isDigit(buf[p])) fail('invalid number', p, len);
    while (isDigit(buf[p])) p++;
  }
  return p;
}

function scanLiteral(buf: Buffer, pos: number, len: number, word: number[]): number {
  for (let i = 0; i < word.length; i++) {
    if (buf[pos + i] !== word[i]) fail('invalid literal', pos + i, len);
  }
  return pos + word.length;
}

class Scanner {
  private readonly buf: Buffer;
  readonly words: DataView;
  private readonly len: number;
  /** Set when insignificant whitespace was skipped since the caller last cleared it. */
  sawWs = false;
  /** Openers of the containers being scanned; grown on demand so deep nesting cannot overflow the call stack. */
  private stack = new Uint8Array(64);

  constructor(buf: Buffer) {
    this.buf = buf;
    this.words = new DataView(buf.buffer, buf.byteOffset, buf.length);
    this.len = buf.length;
  }

  fail(reason: string, at: number): never {
    return fail(reason, at, this.len);
  }

  skipWs(pos: number): number {
    const buf = this.buf;
    let p = pos;
    while (isWs(buf[p])) p++;
    if (p !== pos) this.sawWs = true;
    return p;
  }

  /** A key string at pos, the colon and the whitespace around it; returns where the value starts. */
  private key(pos: number): number {
    const buf = this.buf;
    if (buf[pos] !== QUOTE) this.fail('expected a string key', pos);
    let p = scanString(buf, this.words, pos, this.len);
    if (buf[p] !== COLON) {
      p = this.skipWs(p);
      if (buf[p] !== COLON) this.fail("expected ':'", p);
    }
    p++;
    return isWs(buf[p]) ? this.skipWs(p) : p;
  }

  /** Scans one complete value at pos (no leading whitespace); returns the index right after it. */
  value(start: number): number {
    const buf = this.buf;
    const len = this.len;
    let pos = start;
    let depth = 0;
    for (;;) {
      // A value is expected at pos.
      const c = buf[pos];
      if (c === QUOTE) pos = scanString(buf, this.words, pos, len);
      else if (c === LBRACE || c === LBRACKET) {
        pos++;
        if (isWs(buf[pos])) pos = this.skipWs(pos);
        if (buf[pos] === (c === LBRACE ? RBRACE : RBRACKET)) pos++;
        else {
          if (depth >= this.stack.length) this.grow();
          this.stack[depth++] = c;
          if (c === LBRACE) pos = this.key(pos);
          continue;
        }
      } else if (c === MINUS || isDigit(c)) pos = scanNumber(buf, pos, len);
      else if (c === 0x74) pos = scanLiteral(buf, pos, len, TRUE);
      else if (c === 0x66) pos = scanLiteral(buf, pos, len, FALSE);
      else if (c === 0x6e) pos = scanLiteral(buf, pos, len, NULL);
      else this.fail('expected a JSON value', pos);

      // A value just ended: close containers until one continues with a comma.
      for (;;) {
        if (depth === 0) return pos;
        if (isWs(buf[pos])) pos = this.skipWs(pos);
        const d = buf[pos];
        const top = this.stack[depth - 1];
        if (d === COMMA) {
          pos++;
          if (isWs(buf[pos])) pos = this.skipWs(pos);
          if (top === LBRACE) pos = this.key(pos);
          break;
        }
        if (d === (top === LBRACE ? RBRACE : RBRACKET)) {
          pos++;
          depth--;
          continue;
        }
        this.fail(top === LBRACE ? "expected ',' or '}'" : "expected ',' or ']'", pos);
      }
    }
  }

  private grow(): void {
    const grown = new Uint8Array(this.stack.length * 2);
    grown.set(this.stack);
    this.stack = grown;
  }

  /** The elements of the array at pos, with their spans; returns them and the index after the array. */
  array(at: number, table: SpanTable): { spans: ItemSpans; end: number } {
    const buf = this.buf;
    const spans: ItemSpans = { bounds: table.bounds, count: 0, firstNonObject: -1 };
    let pos = this.skipWs(at + 1);
    if (buf[pos] === RBRACKET) return { spans, end: pos + 1 };
    let bounds = table.bounds;
    for (let i = 0; ; i++) {
      const start = pos;
      if (buf[start] !== LBRACE && spans.firstNonObject < 0) spans.firstNonObject = i;
      this.sawWs = false;
      pos = this.value(start);
      if (2 * i + 2 > bounds.length) {
        const grown = new Int32Array(bounds.length * 2);
        grown.set(bounds);
        bounds = grown;
        table.bounds = grown;
        spans.bounds = grown;
      }
      bounds[2 * i] = start;
      bounds[2 * i + 1] = this.sawWs ? ~pos : pos;
      spans.count = i + 1;
      if (isWs(buf[pos])) pos = this.skipWs(pos);
      const d = buf[pos];
      if (d === COMMA) {
        pos++;
        if (isWs(buf[pos])) pos = this.skipWs(pos);
      } else if (d === RBRACKET) return { spans, end: pos + 1 };
      else this.fail("expected ',' or ']'", pos);
    }
  }
}

/**
 * Validates the whole page as JSON and locates its top-level members and the elements of `items`.
 * Throws JsonSyntaxError on any grammar violation, including trailing bytes after the value.
 * UTF-8 validity is the caller's concern (node:buffer isUtf8 does it natively, much faster).
 */
export function scanPage(buf: Buffer, table: SpanTable = createSpanTable()): ScannedPage {
  // RFC 8259 §8.1: a parser MAY ignore a byte order mark; some servers send one.
  const bom = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  const s = new Scanner(buf);
  const page: ScannedPage = { members: new Map(), duplicates: new Set(), notAnObject: false };
  let pos = s.skipWs(bom);
  if (buf[pos] !== LBRACE) {
    pos = s.value(pos);
    page.notAnObject = true;
  } else {
    pos = s.skipWs(pos + 1);
    if (buf[pos] === RBRACE) pos++;
    else {
      for (;;) {
        if (buf[pos] !== QUOTE) s.fail('expected a string key', pos);
        const keyStart = pos;
        pos = scanString(buf, s.words, pos, buf.length);
        const key = decodeKey(buf, keyStart, pos);
        pos = s.skipWs(pos);
        if (buf[pos] !== COLON) s.fail("expected ':'", pos);
        pos = s.skipWs(pos + 1);
        const start = pos;
        if (key === 'items' && buf[start] === LBRACKET) {
          const scanned = s.array(start, table);
          page.items = scanned.spans;
          pos = scanned.end;
        } else pos = s.value(start);
        if (page.members.has(key)) page.duplicates.add(key);
        page.members.set(key, { start, end: pos });
        pos = s.skipWs(pos);
        const d = buf[pos];
        if (d === COMMA) pos = s.skipWs(pos + 1);
        else if (d === RBRACE) {
          pos++;
          break;
        } else s.fail("expected ',' or '}'", pos);
      }
    }
  }
  pos = s.skipWs(pos);
  if (pos !== buf.length) s.fail('unexpected data after the JSON value', pos);
  return page;
}

function decodeKey(buf: Buffer, start: number, end: number): string {
  // Fast path for the usual plain ASCII key; escapes (e.g. "\u0069tems") go through JSON.parse.
  for (let i = start + 1; i < end - 1; i++) {
    const c = buf[i]!;
    // The scanner found a string.
    if (c === BACKSLASH || c >= 0x80) return JSON.parse(buf.toString('utf8', start, end)) as string;
  }
  return buf.toString('latin1', start + 1, end - 1);
}

/** JSON.parse of one member's raw text (small envelope members only; never items). */
export function parseSpan(buf: Buffer, span: Span): unknown {
  return JSON.parse(buf.toString('utf8', span.start, span.end));
}

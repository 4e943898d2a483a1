// AssemblyScript, compiled to WebAssembly by scripts/build-wasm.mjs (not part of the TypeScript build).
//
// The `items` array of a page, validated and cut into elements exactly as json-scan.ts's Scanner.array does,
// over the page's bytes in linear memory. WebAssembly runs as machine code from the first page on (JavaScript
// runs the first pages of a walk in V8's interpreter, several times slower), and 16 bytes of a string are
// classified at once with SIMD.
//
// Memory: the page's bytes at [0, len), then at least 16 zero bytes. A zero byte is invalid wherever the
// grammar meets it (a control character in a string, and neither whitespace nor the start of a value or a
// token elsewhere), so running into the padding ends the scan as an error and no load needs a bounds check.
// Any error is reported as -1 without a reason: the caller then runs the JavaScript scanner, which says what
// and where.

const QUOTE: u8 = 0x22;
const BACKSLASH: u8 = 0x5c;
const COMMA: u8 = 0x2c;
const COLON: u8 = 0x3a;
const LBRACE: u8 = 0x7b;
const RBRACE: u8 = 0x7d;
const LBRACKET: u8 = 0x5b;
const RBRACKET: u8 = 0x5d;

/** Not a valid array. */
const INVALID: i32 = -1;
/** Valid so far, but the bounds table is full. */
const BOUNDS_FULL: i32 = -2;
/** Nested deeper than the stack given. */
const TOO_DEEP: i32 = -3;

/** Elements found by the last scanArray. */
export let count: i32 = 0;
/** Index of the first element that is not an object, or -1. */
export let firstNonObject: i32 = -1;
/** Set when insignificant whitespace was skipped since it was last cleared. */
let sawWs: bool = false;

@inline function at(p: i32): u8 {
  return load<u8>(p);
}

@inline function isWs(c: u8): bool {
  return c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09;
}

@inline function skipWs(p: i32): i32 {
  while (isWs(at(p))) {
    p++;
    sawWs = true;
  }
  return p;
}

@inline function isDigit(c: u8): bool {
  return c >= 0x30 && c <= 0x39;
}

@inline function isHex(c: u8): bool {
  const lower = c | 0x20;
  return isDigit(c) || (lower >= 0x61 && lower <= 0x66);
}

/** The index after the string whose opening quote is at pos (RFC 8259 §7), or INVALID. */
function scanString(pos: i32): i32 {
  let p = pos + 1;
  const quote = i8x16.splat(0x22);
  const backslash = i8x16.splat(0x5c);
  const control = i8x16.splat(0x20);
  while (true) {
    // 16 bytes at a time: the first '"', '\\' or control byte among them, if any.
    const v = v128.load(p);
    const stops = v128.or(v128.or(i8x16.eq(v, quote), i8x16.eq(v, backslash)), i8x16.lt_u(v, control));
    const mask = i8x16.bitmask(stops);
    if (mask == 0) {
      p += 16;
      continue;
    }
    p += ctz(mask);
    const c = at(p);
    if (c == QUOTE) return p + 1;
    if (c != BACKSLASH) return INVALID; // a control byte, the padding included
    const e = at(p + 1);
    if (e == QUOTE || e == BACKSLASH || e == 0x2f || e == 0x62 || e == 0x66 || e == 0x6e || e == 0x72 || e == 0x74) p += 2;
    else if (e == 0x75 && isHex(at(p + 2)) && isHex(at(p + 3)) && isHex(at(p + 4)) && isHex(at(p + 5))) p += 6;
    else return INVALID;
  }
  return INVALID;
}

/** The index after the number at pos (RFC 8259 §6), or INVALID. */
function scanNumber(pos: i32): i32 {
  let p = pos;
  if (at(p) == 0x2d) p++;
  if (at(p) == 0x30) p++;
  else if (isDigit(at(p))) {
    while (isDigit(at(p))) p++;
  } else return INVALID;
  if (at(p) == 0x2e) {
    p++;
    if (!isDigit(at(p))) return INVALID;
    while (isDigit(at(p))) p++;
  }
  if ((at(p) | 0x20) == 0x65) {
    p++;
    if (at(p) == 0x2b || at(p) == 0x2d) p++;
    if (!isDigit(at(p))) return INVALID;
    while (isDigit(at(p))) p++;
  }
  return p;
}

/** A key string at pos, the colon and the whitespace around it; returns where the value starts, or INVALID. */
@inline function key(pos: i32): i32 {
  if (at(pos) != QUOTE) return INVALID;
  let p = scanString(pos);
  if (p < 0) return INVALID;
  if (at(p) != COLON) {
    p = skipWs(p);
    if (at(p) != COLON) return INVALID;
  }
  return skipWs(p + 1);
}

/** One complete value at start (no leading whitespace); the index after it, INVALID or TOO_DEEP. */
function value(start: i32, stack: i32, stackCap: i32): i32 {
  let pos = start;
  let depth = 0;
  while (true) {
    // A value is expected at pos.
    const c = at(pos);
    if (c == QUOTE) {
      pos = scanString(pos);
      if (pos < 0) return INVALID;
    } else if (c == LBRACE || c == LBRACKET) {
      pos = skipWs(pos + 1);
      if (at(pos) == (c == LBRACE ? RBRACE : RBRACKET)) pos++;
      else {
        if (depth >= stackCap) return TOO_DEEP;
        store<u8>(stack + depth, c);
        depth++;
        if (c == LBRACE) {
          pos = key(pos);
          if (pos < 0) return INVALID;
        }
        continue;
      }
    } else if (c == 0x2d || isDigit(c)) {
      pos = scanNumber(pos);
      if (pos < 0) return INVALID;
    } else if (c == 0x74) {
      if (load<u32>(pos) != 0x65757274) return INVALID; // "true", little-endian
      pos += 4;
    } else if (c == 0x66) {
      if (load<u32>(pos + 1) != 0x65736c61) return INVALID; // "alse"
      pos += 5;
    } else if (c == 0x6e) {
      if (load<u32>(pos) != 0x6c6c756e) return INVALID; // "null"
      pos += 4;
    } else return INVALID;

    // A value just ended: close containers until one continues with a comma.
    while (true) {
      if (depth == 0) return pos;
      pos = skipWs(pos);
      const d = at(pos);
      const top = load<u8>(stack + depth - 1);
      if (d == COMMA) {
        pos = skipWs(pos + 1);
        if (top == LBRACE) {
          pos = key(pos);
          if (pos < 0) return INVALID;
        }
        break;
      }
      if (d == (top == LBRACE ? RBRACE : RBRACKET)) {
        pos++;
        depth--;
        continue;
      }
      return INVALID;
    }
  }
  return INVALID;
}

/**
 * Scans the array whose '[' is at `open`. Element i's start and end go to the i32 pair at bounds + 8i, the end
 * as ~end when the element holds whitespace outside strings (json-scan.ts ItemSpans). Returns the index after
 * the ']', or INVALID, BOUNDS_FULL (more than boundsCap elements) or TOO_DEEP (nesting beyond stackCap).
 */
export function scanArray(open: i32, bounds: i32, boundsCap: i32, stack: i32, stackCap: i32): i32 {
  count = 0;
  firstNonObject = -1;
  let pos = skipWs(open + 1);
  if (at(pos) == RBRACKET) return pos + 1;
  for (let i = 0; ; i++) {
    const start = pos;
    if (at(start) != LBRACE && firstNonObject < 0) firstNonObject = i;
    sawWs = false;
    pos = value(start, stack, stackCap);
    if (pos < 0) return pos;
    if (i >= boundsCap) return BOUNDS_FULL;
    store<i32>(bounds + 8 * i, start);
    store<i32>(bounds + 8 * i + 4, sawWs ? ~pos : pos);
    count = i + 1;
    pos = skipWs(pos);
    const d = at(pos);
    if (d == COMMA) pos = skipWs(pos + 1);
    else if (d == RBRACKET) return pos + 1;
    else return INVALID;
  }
  return INVALID;
}

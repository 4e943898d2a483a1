/**
 * Inputs shared by the tests of the JSON scanner (json-scan.ts) and of what is built on it.
 */

/** A small deterministic generator: rand(n) is an integer in [0, n). */
export function seededRandom(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
}

export interface StringByteCase {
  /** Bytes before the string's opening quote, beyond the fixed prefix: shifts the string's alignment. */
  lead: number;
  /** Position of the byte under test within the string's content. */
  at: number;
  byte: number;
  /** The string's content: `width` bytes of 'a' with `byte` at `at`. */
  inner: Buffer;
}

/**
 * Every byte value at every position of a `width`-byte string, the string starting at each of `leads`
 * alignments: for scanners that look at several bytes of a string at once.
 */
export function* stringByteCases(leads: number, width: number): Generator<StringByteCase> {
  for (let lead = 0; lead < leads; lead++) {
    for (let at = 0; at < width; at++) {
      for (let byte = 0; byte < 256; byte++) {
        const inner = Buffer.alloc(width, 0x61);
        inner[at] = byte;
        yield { lead, at, byte, inner };
      }
    }
  }
}

/** Whether JSON.parse accepts the bytes, read as Latin-1 (every byte one character). */
export function parsesAsJson(buf: Buffer): boolean {
  try {
    JSON.parse(buf.toString('latin1'));
    return true;
  } catch {
    return false;
  }
}

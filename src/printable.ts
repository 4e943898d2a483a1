/**
 * Text from servers and links may carry terminal control sequences that rewrite the screen: everything shown passes
 * here, each control character escaped as JSON writes it (`\r`, `\u001b`), seen but inert. Bidi controls (U+200E/F,
 * U+202A–U+202E, U+2066–U+2069) too: they reorder what follows on screen, so a name could show as another.
 */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** JSON's short escapes; every other control character is written `\u00XX`. */
const SHORT_ESCAPES: Readonly<Record<number, string>> = {
  0x08: '\\b',
  0x09: '\\t',
  0x0a: '\\n',
  0x0c: '\\f',
  0x0d: '\\r',
};

/** How a control character (C0, DEL or C1, by its code point) is shown. */
function escaped(code: number): string {
  return SHORT_ESCAPES[code] ?? `\\u${code.toString(16).padStart(4, '0')}`;
}

/** One line of a message: every C0, C1 and bidi control character (newline and tab too) escaped. Idempotent. */
export function printable(text: string): string {
  return text.replace(CONTROLS, (c) => escaped(c.charCodeAt(0)));
}

/**
 * Bytes bound for a terminal, each control character but newline and tab escaped as `printable` does (C0, DEL, C1 as
 * UTF-8 0xC2 0x80–0x9F), every other byte as sent; `bytes` itself when there is nothing to escape.
 */
export function escapeControls(bytes: Buffer): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    const next = bytes[i + 1] ?? 0;
    let code: number;
    if (b < 0x20 ? b !== 0x09 && b !== 0x0a : b === 0x7f) code = b;
    else if (b === 0xc2 && next >= 0x80 && next <= 0x9f) code = next;
    else continue;
    parts.push(bytes.subarray(from, i), Buffer.from(escaped(code)));
    if (code >= 0x80) i++;
    from = i + 1;
  }
  if (parts.length === 0) return bytes;
  parts.push(bytes.subarray(from));
  return Buffer.concat(parts);
}

/** The most characters of a URL or a server's string echoed in one message or trace. */
export const MAX_ECHO = 200;

/** `text` cut to `max` characters, the cut marked with an ellipsis. */
export function clip(text: string, max = MAX_ECHO): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `text` cut to `max` characters by dropping its middle, marked with an ellipsis: both ends of a name tell. */
export function clipMiddle(text: string, max = MAX_ECHO): string {
  if (text.length <= max) return text;
  const head = Math.ceil((max - 1) / 2);
  return `${text.slice(0, head)}…${text.slice(text.length - (max - 1 - head))}`;
}

/** A value from the user or a file, quoted for a message and cut to MAX_ECHO characters: an argument can be 128 KiB. */
export function quoted(text: string): string {
  return `'${clip(text)}'`;
}

import { describe, expect, it } from 'vitest';
import { escapeControls, printable } from '../src/printable.js';

const shown = (bytes: Buffer | string): string => escapeControls(Buffer.from(bytes)).toString('latin1');

describe('escapeControls', () => {
  it('escapes C0 but newline and tab, DEL and UTF-8 C1 the way JSON writes them', () => {
    expect(shown('\x1b[2J\x07\r\b\f\x00\x1f\x7f')).toBe('\\u001b[2J\\u0007\\r\\b\\f\\u0000\\u001f\\u007f');
    expect(shown(Buffer.from([0xc2, 0x80, 0x41, 0xc2, 0x9b]))).toBe('\\u0080A\\u009b');
  });
  it('passes every other byte as is: newline, tab, text, U+00A0, a lone C2 at the end, invalid UTF-8', () => {
    const plain = Buffer.concat([Buffer.from('a\tb\ncafé ✓ \u00a0'), Buffer.from([0x9b, 0xff, 0xc2])]);
    expect(escapeControls(plain)).toBe(plain);
  });
});

describe('printable', () => {
  it('shows every control character of a message escaped as escapeControls does, newline and tab too', () => {
    expect(printable('a\rb\x1b[2J\x07\n\tc\x7f\u009bd\u0085')).toBe(
      'a\\rb\\u001b[2J\\u0007\\n\\tc\\u007f\\u009bd\\u0085',
    );
    const body = 'x\x1b]0;t\x07\r\b\f\u009d';
    expect(printable(body)).toBe(escapeControls(Buffer.from(body)).toString());
  });
  it('escapes bidi controls, which would reorder what follows on screen', () => {
    expect(printable('a\u202eb\u200e\u200f\u202a\u2066\u2069c')).toBe('a\\u202eb\\u200e\\u200f\\u202a\\u2066\\u2069c');
    expect(printable(printable('\u202e'))).toBe('\\u202e');
  });
  it('leaves text without controls as it is, so a second pass changes nothing', () => {
    const text = 'café ✓ \u00a0 "quoted" back\\slash';
    expect(printable(text)).toBe(text);
    const once = printable('\x1b[31mred\r');
    expect(printable(once)).toBe(once);
  });
});

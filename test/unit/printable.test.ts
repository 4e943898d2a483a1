import { describe, expect, it } from 'vitest';
import { escapeControls } from '../../src/printable.js';

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

import { describe, expect, it } from 'vitest';
import { buildNdjsonInPlace } from '../../src/paginate/ndjson.js';
import { scanPage } from '../../src/paginate/json-scan.js';

function build(text: string, count: number): string {
  const buf = Buffer.from(text, 'utf8');
  const s = scanPage(buf);
  return buildNdjsonInPlace(buf, s.items!, count).toString('utf8');
}

describe('buildNdjsonInPlace', () => {
  const compact = '{"items":[{"a":1},{"b":2},{"c":3}],"links":{}}';
  const pretty = '{\n  "items": [\n    {"a":1},\n    { "b" : 2 },\n    {"c":3}\n  ]\n}';

  it('writes the first count items only (for --limit)', () => {
    expect(build(compact, 2)).toBe('{"a":1}\n{"b":2}\n');
    expect(build(pretty, 2)).toBe('{"a":1}\n{"b":2}\n');
  });

  it('writes every item when count exceeds the page', () => {
    expect(build(compact, 10)).toBe('{"a":1}\n{"b":2}\n{"c":3}\n');
    expect(build(pretty, 10)).toBe('{"a":1}\n{"b":2}\n{"c":3}\n');
  });

  it('returns an empty buffer for no items', () => {
    expect(build('{"items":[]}', 5)).toBe('');
    expect(build(compact, 0)).toBe('');
  });

  it('returns a view of the page buffer for a compact page (no copy)', () => {
    const buf = Buffer.from(compact);
    const out = buildNdjsonInPlace(buf, scanPage(buf).items!, 3);
    expect(out.buffer).toBe(buf.buffer);
    expect(out.byteOffset).toBe(buf.byteOffset + compact.indexOf('[') + 1);
  });

  it('keeps multi-byte UTF-8 intact when items move', () => {
    expect(build('{"items":[ {"s":"é😀"} , { "t" : "日本" } ]}', 2)).toBe('{"s":"é😀"}\n{"t":"日本"}\n');
  });
});

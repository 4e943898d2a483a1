import { describe, expect, it } from 'vitest';
import { buildNdjsonInPlace } from '../../src/paginate/ndjson.js';
import { createSpanTable, itemSpan, JsonSyntaxError, scanPage } from '../../src/paginate/json-scan.js';
import { parsesAsJson, seededRandom, stringByteCases } from '../support/json-cases.js';

const enc = (s: string) => Buffer.from(s, 'utf8');

/** The NDJSON the scanner + builder produce for a page's items. */
function ndjson(page: string): string {
  const buf = enc(page);
  const scanned = scanPage(buf);
  if (!scanned.items) throw new Error('no items');
  return buildNdjsonInPlace(buf, scanned.items, scanned.items.count).toString('utf8');
}

describe('scanPage', () => {
  it('locates the top-level members and the item boundaries', () => {
    const text = '{"pageIndex":0,"totalItems":2,"items":[{"a":1},{"b":[2,3]}],"links":{"self":"x"}}';
    const s = scanPage(enc(text));
    expect([...s.members.keys()]).toEqual(['pageIndex', 'totalItems', 'items', 'links']);
    const links = s.members.get('links')!;
    expect(text.slice(links.start, links.end)).toBe('{"self":"x"}');
    const spans = [0, 1].map((i) => itemSpan(s.items!, i));
    expect(spans.map((sp) => text.slice(sp.start, sp.end))).toEqual(['{"a":1}', '{"b":[2,3]}']);
    expect(spans.map((sp) => sp.dirty)).toEqual([false, false]);
    expect(s.items!.count).toBe(2);
    expect(s.items!.firstNonObject).toBe(-1);
  });

  it('keeps integers beyond 2^53, number spelling, escapes, unicode and key order byte for byte', () => {
    const items = [
      '{"id":12345678901234567890123,"f":1.50,"e":1E+400,"n":-0}',
      '{"z":1,"a":2,"s":"tab\\t quote\\" slash\\/ u\\u00e9 \\ud83d\\ude00 raw é 日本 😀"}',
      '{"nested":{"deep":[[[{"x":null}]]],"t":true,"f":false}}',
    ];
    const out = ndjson(`{"items":[${items.join(',')}],"links":{}}`);
    expect(out).toBe(`${items.join('\n')}\n`);
  });

  it('removes insignificant whitespace but never whitespace inside strings', () => {
    const page = `{
      "items" : [
        { "a" : 1 ,
          "b" : [ 1 , 2 ] , "s" : "  two  spaces\\n " } ,
        {"clean":"yes"}
        ,
        {	"tab" :	"\\t in string"	}
      ],
      "links": {}
    }`;
    expect(ndjson(page)).toBe('{"a":1,"b":[1,2],"s":"  two  spaces\\n "}\n{"clean":"yes"}\n{"tab":"\\t in string"}\n');
  });

  it('handles a string ending in an escaped backslash while minifying', () => {
    expect(ndjson('{"items":[ { "p" : "C:\\\\" , "q" : "\\\\\\"" } ]}')).toBe('{"p":"C:\\\\","q":"\\\\\\""}\n');
  });

  it('handles pages of many tiny items (the span table grows)', () => {
    const n = 5000;
    const out = ndjson(`{"items":[${Array.from({ length: n }, (_, i) => (i % 7 ? '{}' : '{ }')).join(',')}]}`);
    expect(out).toBe('{}\n'.repeat(n));
  });

  it('scans arrays of over a million items and pages over 8 MB', () => {
    expect(scanPage(enc(`{"items":[${'0,'.repeat(1_100_000)}0]}`)).items!.count).toBe(1_100_001);
    const item = `{"s":"${'x'.repeat(1000)}"}`;
    const big = enc(`{"items":[${Array.from({ length: 8500 }, () => item).join(',')}]}`);
    expect(big.length).toBeGreaterThan(8 * 1024 * 1024);
    expect(scanPage(big).items!.count).toBe(8500);
  });

  it('reuses one span table across pages, growing it when a page needs more', () => {
    const table = createSpanTable();
    for (const n of [3, 5000, 2, 9000, 0, 7]) {
      const buf = enc(`{"items":[${Array.from({ length: n }, (_, i) => `{"i":${i}}`).join(' ,')}]}`);
      const s = scanPage(buf, table);
      expect(s.items!.count).toBe(n);
      const lines = buildNdjsonInPlace(buf, s.items!, n).toString();
      expect(lines).toBe(Array.from({ length: n }, (_, i) => `{"i":${i}}\n`).join(''));
    }
    expect(table.bounds.length).toBeGreaterThanOrEqual(18_000);
  });

  it('flags exactly the items that carry insignificant whitespace', () => {
    const text = '{"items":[{"a":1},{ "b":2},{"c":"x y"},{"d":[1, 2]}]}';
    const s = scanPage(enc(text));
    expect([0, 1, 2, 3].map((i) => itemSpan(s.items!, i).dirty)).toEqual([false, true, false, true]);
  });

  it('accepts an empty items array and a byte order mark', () => {
    const s = scanPage(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), enc(' {"items":[ ],"links":{}} \n')]));
    expect(s.items!.count).toBe(0);
  });

  it('reports non-object items and a non-object page', () => {
    expect(scanPage(enc('{"items":[{},1,{}]}')).items!.firstNonObject).toBe(1);
    expect(scanPage(enc('[1,2]')).notAnObject).toBe(true);
  });

  it('records duplicate top-level keys, including escaped spellings', () => {
    const s = scanPage(enc('{"items":[],"\\u0069tems":[{}]}'));
    expect(s.duplicates.has('items')).toBe(true);
    expect(s.items!.count).toBe(1);
  });

  it('does not overflow the stack on deeply nested items', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const s = scanPage(enc(`{"items":[{"d":${deep}}]}`));
    expect(s.items!.count).toBe(1);
  });

  it.each([
    ['truncated', '{"items":[{"a":1}'],
    ['trailing comma', '{"items":[{"a":1},]}'],
    ['trailing data', '{"items":[]} x'],
    ['two values', '{"items":[]}{}'],
    ['leading zero', '{"items":[{"n":01}]}'],
    ['bare minus', '{"items":[{"n":-}]}'],
    ['dot without digits', '{"items":[{"n":1.}]}'],
    ['exponent without digits', '{"items":[{"n":1e+}]}'],
    ['single quotes', "{'items':[]}"],
    ['unquoted key', '{items:[]}'],
    ['bad escape', '{"items":[{"s":"\\x41"}]}'],
    ['short unicode escape', '{"items":[{"s":"\\u12"}]}'],
    ['raw control character', '{"items":[{"s":"a\u0001b"}]}'],
    ['raw newline in string', '{"items":[{"s":"a\nb"}]}'],
    ['unterminated string', '{"items":[{"s":"abc}]}'],
    ['bad literal', '{"items":[{"t":tru}]}'],
    ['NaN', '{"items":[{"n":NaN}]}'],
    ['missing colon', '{"items" []}'],
    ['mismatched bracket', '{"items":[{"a":1]]}'],
    ['empty body', ''],
    ['only whitespace', '  \n'],
  ])('rejects %s', (_name, text) => {
    expect(() => scanPage(enc(text))).toThrow(JsonSyntaxError);
  });

  it('agrees with JSON.parse on thousands of random mutations', () => {
    // Differential check: mutate valid pages byte by byte (ASCII only, so UTF-8 validity is not in play).
    const rand = seededRandom(42);
    const base =
      '{"items":[{"a":[1,-2.5e3,true,null],"b":"x\\"y\\\\z\\u0041"},{"c":{"d":false}}],"links":{"self":"s"}}';
    const alphabet = '{}[]":,.-+eE0123456789 \t\ntrufalsn\\/ux';
    let agreed = 0;
    for (let i = 0; i < 5000; i++) {
      const chars = [...base];
      const edits = 1 + rand(3);
      for (let k = 0; k < edits; k++) {
        const at = rand(chars.length);
        const op = rand(3);
        const c = alphabet[rand(alphabet.length)]!;
        if (op === 0) chars[at] = c;
        else if (op === 1) chars.splice(at, 0, c);
        else chars.splice(at, 1);
      }
      const text = chars.join('');
      let parsed: unknown;
      let jsonOk = true;
      try {
        parsed = JSON.parse(text);
      } catch {
        jsonOk = false;
      }
      let scanOk = true;
      try {
        scanPage(enc(text));
      } catch (err) {
        expect(err).toBeInstanceOf(JsonSyntaxError);
        scanOk = false;
      }
      expect(scanOk, text).toBe(jsonOk);
      if (jsonOk) agreed++;
      void parsed;
    }
    // The mutations must exercise both outcomes for the comparison to mean anything.
    expect(agreed).toBeGreaterThan(50);
    expect(agreed).toBeLessThan(4950);
  });

  it('finds every byte that ends or breaks a string, at every offset within a four-byte word', () => {
    // The string fast path tests four bytes at a time; each byte value is tried at each position of a
    // long string, with the string starting at each alignment, against JSON.parse over the same bytes.
    for (const { lead, at, byte, inner } of stringByteCases(4, 12)) {
      const buf = Buffer.concat([enc(`{"items":[],${' '.repeat(lead)}"k":"`), inner, enc('"}')]);
      const jsonOk = parsesAsJson(buf);
      let scanOk = true;
      try {
        scanPage(buf);
      } catch (err) {
        expect(err).toBeInstanceOf(JsonSyntaxError);
        scanOk = false;
      }
      expect(scanOk, `byte ${byte} at ${at}, lead ${lead}`).toBe(jsonOk);
      if (jsonOk)
        expect(buf.subarray(scanPage(buf).members.get('k')!.start).toString('latin1')).toBe(
          `"${inner.toString('latin1')}"}`,
        );
    }
  });

  it('minified items parse to the same values as the originals', () => {
    const items = ['{ "a" : [ 1 , { "b" : "c d" } ] }', '{"x":"\\u0000\\n\\r\\t\\b\\f\\/"}', '{ }', '{"e":[ ]}'];
    const lines = ndjson(`{"items":[\n${items.join(' ,\r\n ')}\n]}`).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l))).toEqual(items.map((i) => JSON.parse(i)));
    expect(lines).toEqual(['{"a":[1,{"b":"c d"}]}', '{"x":"\\u0000\\n\\r\\t\\b\\f\\/"}', '{}', '{"e":[]}']);
  });
});

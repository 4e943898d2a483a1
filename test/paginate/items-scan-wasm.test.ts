/**
 * The WebAssembly items scanner (src/paginate/items-scan.as.ts through wasm-items.ts) against the JavaScript
 * scanner it stands in for: the same verdicts and the same spans, and never a silent fallback on valid input.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { createSpanTable, type ItemSpans, itemSpan, JsonSyntaxError, scanPage } from '../../src/paginate/json-scan.js';
import { scanItemsWasm } from '../../src/paginate/wasm-items.js';
import { parsesAsJson, seededRandom, stringByteCases } from './json-cases.js';
// @ts-expect-error a plain JavaScript build script without type declarations
import { GENERATED, generate } from '../../scripts/build-wasm.mjs';

const enc = (s: string) => Buffer.from(s, 'utf8');

/** A random JSON value with random insignificant whitespace, as text. */
function randomValue(rand: (n: number) => number, depth: number): string {
  const ws = () => [' ', '\n', '\t', '\r', ''][rand(8)] ?? '';
  const kind = depth > 4 ? rand(5) : rand(7);
  switch (kind) {
    case 0:
      return ['0', '-1', '12345678901234567890', '1.5e-300', '-0.0E+2', '7E3'][rand(6)]!;
    case 1:
      return ['true', 'false', 'null'][rand(3)]!;
    case 2:
    case 3:
    case 4: {
      const parts = [
        'plain',
        'quote\\"',
        'back\\\\slash',
        '\\u00e9\\uD83D\\uDE00',
        'é 日本 😀',
        'a'.repeat(rand(40)),
        '\\/\\b\\f\\n\\r\\t',
      ];
      return `"${parts[rand(parts.length)]}${'x'.repeat(rand(20))}"`;
    }
    case 5: {
      const n = rand(4);
      return `[${ws()}${Array.from({ length: n }, () => randomValue(rand, depth + 1)).join(`${ws()},${ws()}`)}${ws()}]`;
    }
    default: {
      const n = rand(5);
      const members = Array.from(
        { length: n },
        (_, i) => `${ws()}"k${i}${'y'.repeat(rand(12))}"${ws()}:${ws()}${randomValue(rand, depth + 1)}${ws()}`,
      );
      return `{${members.join(',')}${n === 0 ? ws() : ''}}`;
    }
  }
}

function spansOf(items: ItemSpans): { start: number; end: number; dirty: boolean }[] {
  return Array.from({ length: items.count }, (_, i) => itemSpan(items, i));
}

/** What the WebAssembly scanner says about the array at the first '[' (null: left to JavaScript). */
function wasmVerdict(buf: Buffer) {
  const table = createSpanTable();
  const result = scanItemsWasm(buf, buf.indexOf(0x5b), table);
  return (
    result && {
      ...result,
      spans: spansOf({ bounds: table.bounds, count: result.count, firstNonObject: result.firstNonObject }),
    }
  );
}

/** What the JavaScript scanner says about the same page. */
function jsVerdict(buf: Buffer) {
  try {
    const page = scanPage(buf, createSpanTable(), { wasm: false });
    return {
      count: page.items!.count,
      firstNonObject: page.items!.firstNonObject,
      spans: spansOf(page.items!),
      end: page.members.get('items')!.end,
    };
  } catch (err) {
    expect(err).toBeInstanceOf(JsonSyntaxError);
    return null;
  }
}

describe('the WebAssembly items scanner', () => {
  it('is built from its source: the committed module is what scripts/build-wasm.mjs makes of it', async () => {
    expect(await (generate as () => Promise<string>)()).toBe(await readFile(GENERATED as string, 'utf8'));
  }, 60_000);

  it('finds the same items, spans, whitespace flags and end as the JavaScript scanner on random pages', () => {
    const rand = seededRandom(7);
    for (let i = 0; i < 2000; i++) {
      const n = rand(12);
      const items = Array.from({ length: n }, () => randomValue(rand, 0));
      const buf = enc(`{"pageIndex":0,"items":[${items.join(rand(2) ? ',' : ' , ')}],"links":{"self":"s"}}`);
      const wasm = wasmVerdict(buf);
      expect(wasm, buf.toString()).not.toBeNull();
      const js = jsVerdict(buf);
      expect(wasm, buf.toString()).toEqual(js);
    }
  });

  it('agrees with the JavaScript scanner on thousands of random mutations, and never falls back on a valid array', () => {
    const rand = seededRandom(42);
    const base =
      '{"items":[{"a":[1,-2.5e3,true,null],"b":"x\\"y\\\\z\\u0041"},{"c":{"d":false}}, "s" ,[]],"links":{"self":"s"}}';
    const alphabet = '{}[]":,.-+eE0123456789 \t\ntrufalsn\\/ux';
    const outcomes = { valid: 0, invalid: 0 };
    for (let i = 0; i < 5000; i++) {
      const chars = [...base];
      for (let k = 1 + rand(3); k > 0; k--) {
        const at = 10 + rand(chars.length - 10); // keep `{"items":[` so the array is where the test looks
        const c = alphabet[rand(alphabet.length)]!;
        const op = rand(3);
        if (op === 0) chars[at] = c;
        else if (op === 1) chars.splice(at, 0, c);
        else chars.splice(at, 1);
      }
      const buf = enc(chars.join(''));
      const wasm = wasmVerdict(buf);
      if (wasm) {
        outcomes.valid++;
        // The array alone, closed as a page (what follows it may be broken), through the JavaScript scanner.
        expect(wasm, buf.toString()).toEqual(jsVerdict(Buffer.concat([buf.subarray(0, wasm.end), enc('}')])));
      } else {
        outcomes.invalid++;
        // Invalid for WebAssembly means invalid for JavaScript: the array, followed by a proper end, is rejected.
        let arrayOk = true;
        try {
          scanPage(buf, createSpanTable(), { wasm: false });
        } catch {
          arrayOk = false;
        }
        if (arrayOk) expect.fail(`WebAssembly rejected a page JavaScript accepts: ${buf.toString()}`);
      }
    }
    expect(outcomes.valid).toBeGreaterThan(50);
    expect(outcomes.invalid).toBeGreaterThan(50);
  });

  it('classifies every byte at every position of its 16-byte string blocks as JSON.parse does', () => {
    for (const { lead, at, byte, inner } of stringByteCases(16, 34)) {
      const buf = Buffer.concat([enc(`{"items":[${' '.repeat(lead)}"`), inner, enc('"]}')]);
      const wasm = wasmVerdict(buf);
      expect(wasm !== null, `byte ${byte} at ${at}, lead ${lead}`).toBe(parsesAsJson(buf));
      if (wasm) expect(wasm.spans).toEqual([{ start: 10 + lead, end: buf.length - 2, dirty: false }]);
    }
  });

  it('stops at the end of the page wherever it is cut', () => {
    const page =
      '{"items":[{"s":"abcdefghijklmnopqrstuvwxyz0123456789","n":-12.5e3,"t":true,"f":false,"z":null,"a":[1,{}]}]}';
    for (let cut = 10; cut < page.length - 1; cut++) {
      // The module's memory still holds the whole page from the scan before: past the cut it must see the
      // padding, not the rest of the page.
      expect(wasmVerdict(enc(page))?.count).toBe(1);
      expect(wasmVerdict(enc(page).subarray(0, cut)), `cut at ${cut}`).toBeNull();
    }
  });

  it('grows its table for pages of many items, and leaves nesting deeper than its stack to JavaScript', () => {
    const many = enc(`{"items":[${'{},'.repeat(20_000)}{}]}`);
    expect(wasmVerdict(many)?.count).toBe(20_001);
    // Beyond 2^20 items the table would outgrow a copy of the page: JavaScript takes it.
    const tiny = enc(`{"items":[${'0,'.repeat(1_100_000)}0]}`);
    expect(wasmVerdict(tiny)).toBeNull();
    expect(scanPage(tiny).items!.count).toBe(1_100_001);
    const deep = enc(`{"items":[${'['.repeat(5000)}${']'.repeat(5000)}]}`);
    expect(wasmVerdict(deep)).toBeNull();
    expect(scanPage(deep).items!.count).toBe(1);
  });

  it('leaves pages over 8 MB to JavaScript rather than copy them', () => {
    const item = `{"s":"${'x'.repeat(1000)}"}`;
    const big = enc(`{"items":[${Array.from({ length: 8500 }, () => item).join(',')}]}`);
    expect(big.length).toBeGreaterThan(8 * 1024 * 1024);
    expect(wasmVerdict(big)).toBeNull();
    expect(scanPage(big).items!.count).toBe(8500);
  });
});

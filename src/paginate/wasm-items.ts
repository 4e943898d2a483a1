/**
 * The fast path of json-scan.ts for a page's `items` array: the same validation and the same element spans,
 * computed by the WebAssembly module built from items-scan.as.ts. A walk spends most of its own time scanning
 * items, and V8 runs the first pages of JavaScript in its interpreter; the module runs as machine code from the
 * start. The JavaScript scanner stays the reference: it decides whenever this returns null (an invalid array,
 * to say what is wrong and where; nesting deeper than the module's stack; no WebAssembly, as under --jitless).
 */
import { ITEMS_SCAN_WASM } from './items-scan-wasm.js';
import type { SpanTable } from './json-scan.js';

/** The part of the WebAssembly API used here (Node's type definitions leave it out); absent under --jitless. */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}

interface ItemsScanModule {
  memory: { readonly buffer: ArrayBuffer; grow(pages: number): number };
  scanArray(open: number, bounds: number, boundsCap: number, stack: number, stackCap: number): number;
  count: { readonly value: number };
  firstNonObject: { readonly value: number };
}

/** Zero bytes after the page: the module reads up to 16 bytes past a position without bounds checks. */
const PADDING = 16;
/** Containers nested deeper than this go to the JavaScript scanner, whose stack grows. */
const STACK_CAP = 1024;
/** scanArray's answer when the bounds table is full. */
const BOUNDS_FULL = -2;
const PAGE_BYTES = 65536;
/**
 * Larger pages go to the JavaScript scanner: the module works on a copy, which would double such a page in
 * memory (and its memory never shrinks), while one long page gives V8 the time to optimise the JavaScript.
 */
const MAX_PAGE = 8 * 1024 * 1024;
const MAX_BOUNDS_CAP = 1 << 20;

let loaded: ItemsScanModule | null | undefined;
/** Elements the bounds area holds; doubled when a page has more. */
let boundsCap = 4096;

function instance(): ItemsScanModule | null {
  if (loaded !== undefined) return loaded;
  const api = (globalThis as { WebAssembly?: WebAssemblyApi }).WebAssembly;
  try {
    if (api === undefined) throw new Error('no WebAssembly');
    loaded = new api.Instance(new api.Module(Buffer.from(ITEMS_SCAN_WASM, 'base64')), {}).exports as ItemsScanModule;
  } catch {
    loaded = null; // no WebAssembly here, or no SIMD: the JavaScript scanner does the work
  }
  return loaded;
}

export interface WasmItems {
  count: number;
  firstNonObject: number;
  /** Index after the array's ']'. */
  end: number;
}

/**
 * Scans the array whose '[' is at `open` in `page`, writing the element spans into `table` as Scanner.array
 * does. Null leaves the array to the JavaScript scanner (see above).
 */
export function scanItemsWasm(page: Buffer, open: number, table: SpanTable): WasmItems | null {
  if (page.length > MAX_PAGE) return null;
  const wasm = instance();
  if (wasm === null) return null;
  for (;;) {
    const boundsAt = (page.length + PADDING + 7) & ~7;
    const stackAt = boundsAt + 8 * boundsCap;
    const needed = stackAt + STACK_CAP;
    const have = wasm.memory.buffer.byteLength;
    if (needed > have) {
      try {
        wasm.memory.grow(Math.ceil((needed - have) / PAGE_BYTES));
      } catch {
        return null; // memory for a copy of this page is not to be had: the JavaScript scanner reads it in place
      }
    }
    const memory = new Uint8Array(wasm.memory.buffer);
    memory.set(page, 0);
    memory.fill(0, page.length, page.length + PADDING);
    const end = wasm.scanArray(open, boundsAt, boundsCap, stackAt, STACK_CAP);
    if (end === BOUNDS_FULL) {
      if (boundsCap >= MAX_BOUNDS_CAP) return null;
      boundsCap *= 2;
      continue;
    }
    if (end < 0) return null;
    const count = wasm.count.value;
    if (2 * count > table.bounds.length) {
      let size = table.bounds.length;
      while (size < 2 * count) size *= 2;
      table.bounds = new Int32Array(size);
    }
    table.bounds.set(new Int32Array(wasm.memory.buffer, boundsAt, 2 * count));
    return { count, firstNonObject: wasm.firstNonObject.value, end };
  }
}

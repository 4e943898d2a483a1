import { describe, expect, it } from 'vitest';
import { ByteBudget, WINDOW_BYTES } from '../../src/paginate/byte-budget.js';

const KB = 1024;
const MB = 1024 * KB;
const CHUNK = 64 * KB;

/**
 * A walk of pages of `sizes` through the budget, `window` pages in flight at most: every page not paused gets a chunk
 * in turn (the whole Content-Length counted from its first chunk when `declared`), the oldest is written (released) as
 * soon as it is whole, and new requests start while the window and the budget allow. Returns the most bytes that ever
 * arrived and were not yet written, and how many pages were written.
 */
function walk(sizes: number[], window: number, declared: boolean) {
  const budget = new ByteBudget();
  interface Page {
    seq: number;
    size: number;
    got: number;
    paused: boolean;
  }
  const inFlight: Page[] = [];
  let next = 0;
  let most = 0;
  let written = 0;
  const fill = () => {
    while (next < sizes.length && inFlight.length < window && budget.roomForOne) {
      inFlight.push({ seq: budget.start(), size: sizes[next++]!, got: 0, paused: false });
    }
  };
  fill();
  for (let steps = 0; inFlight.length > 0; steps++) {
    if (steps > 10_000_000) throw new Error('the walk does not move: a page waits for nothing');
    for (const page of [...inFlight]) {
      if (page.paused || page.got >= page.size) continue;
      page.got = Math.min(page.size, page.got + CHUNK);
      const counted = declared ? page.size : page.got;
      page.paused = !budget.hold(page.seq, counted, () => (page.paused = false));
      most = Math.max(
        most,
        inFlight.reduce((sum, p) => sum + p.got, 0),
      );
    }
    while (inFlight[0] && inFlight[0].got >= inFlight[0].size) {
      inFlight.shift();
      budget.releaseOldest();
      written++;
      fill();
    }
  }
  return { most, written };
}

/** Pages from 1 KB growing by `factor` each to `to`, after `small` pages of 1 KB. */
function growing(small: number, to: number, factor: number, after = 5): number[] {
  const sizes = Array.from({ length: small }, () => KB);
  for (let s = KB; s < to; s = Math.ceil(s * factor)) sizes.push(s);
  for (let i = 0; i < after; i++) sizes.push(to);
  return sizes;
}

describe('the byte budget of a walk', () => {
  const cases = {
    'growing from 1 KB to 30 MB after 300 small pages': growing(300, 30 * MB, 1.5),
    'a jump from 1 KB to 30 MB after 300 small pages': growing(300, 30 * MB, 30_000),
    'a jump to 55 MB': growing(300, 55 * MB, 60_000),
    'sizes that vary page by page': Array.from({ length: 200 }, (_, i) => ((i * 7919) % 97) * 300 * KB + KB),
  };
  for (const [name, sizes] of Object.entries(cases)) {
    for (const window of [1, 2, 4, 16, 32]) {
      it.each([false, true])(
        `${name}, ${window} in flight (Content-Length given: %s): at most the cap and one page`,
        (declared) => {
          const { most, written } = walk(sizes, window, declared);
          expect(written).toBe(sizes.length);
          const largest = Math.max(...sizes);
          // A paused page has taken the chunk that crossed the cap.
          expect(most).toBeLessThanOrEqual(WINDOW_BYTES + largest + window * CHUNK);
        },
      );
    }
  }

  it('keeps a request from starting when a page of the largest size so far would not fit, and says so once', () => {
    const told: number[] = [];
    const budget = new ByteBudget(10 * MB, (largest) => told.push(largest));
    const a = budget.start();
    expect(budget.hold(a, 4 * MB, () => {})).toBe(true);
    expect(budget.roomForOne).toBe(true);
    const b = budget.start();
    // b has no byte yet, but counts as large as the largest: a third would make 12 MB.
    expect(budget.roomForOne).toBe(false);
    expect(told).toEqual([4 * MB]);
    budget.releaseOldest();
    expect(budget.roomForOne).toBe(true);
    expect(budget.hold(b, 4 * MB, () => {})).toBe(true);
  });

  it('pauses all but the oldest page past the cap, and resumes them in order as pages are written', () => {
    const budget = new ByteBudget(10 * MB);
    const resumed: string[] = [];
    const [a, b, c] = [budget.start(), budget.start(), budget.start()];
    expect(budget.hold(b, 6 * MB, () => resumed.push('b'))).toBe(true);
    expect(budget.hold(c, 6 * MB, () => resumed.push('c'))).toBe(false);
    // The oldest page goes on whatever it holds: the walk writes it next.
    expect(budget.hold(a, 20 * MB, () => resumed.push('a'))).toBe(true);
    expect(budget.bytes).toBe(32 * MB);
    budget.releaseOldest();
    // b is now the oldest; c fits again once b is written.
    expect(resumed).toEqual([]);
    budget.releaseOldest();
    expect(resumed).toEqual(['c']);
  });

  it('a page dropped unwritten frees its bytes and is never the oldest the walk waits behind', () => {
    const budget = new ByteBudget(10 * MB);
    const resumed: string[] = [];
    const [a, b, c] = [budget.start(), budget.start(), budget.start()];
    expect(budget.hold(a, 1 * MB, () => {})).toBe(true);
    expect(budget.hold(b, 12 * MB, () => resumed.push('b'))).toBe(false);
    budget.release(b);
    expect(budget.hold(c, 8 * MB, () => resumed.push('c'))).toBe(true);
    budget.releaseOldest();
    expect(budget.bytes).toBe(8 * MB);
    expect(resumed).toEqual([]);
  });
});

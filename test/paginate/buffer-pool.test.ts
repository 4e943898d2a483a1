import { describe, expect, it } from 'vitest';
import { createBufferPool, roundedUp } from '../../src/paginate/buffer-pool.js';

describe('createBufferPool', () => {
  it('hands back a returned buffer (given as any view of it) instead of allocating', () => {
    const pool = createBufferPool(2);
    const a = pool.take(100_000);
    expect(a.length).toBeGreaterThanOrEqual(100_000);
    pool.give(a.subarray(10, 20));
    const b = pool.take(90_000);
    expect(b.buffer).toBe(a.buffer);
    expect(b.length).toBe(a.length);
  });

  it('allocates when nothing free is big enough, and keeps at most maxFree', () => {
    const pool = createBufferPool(1);
    const small = pool.take(10);
    const big = pool.take(1_000_000);
    expect(big.buffer).not.toBe(small.buffer);
    pool.give(small);
    pool.give(big); // over maxFree: dropped
    expect(pool.take(1_000_000).buffer).not.toBe(big.buffer);
    expect(pool.take(10).buffer).toBe(small.buffer);
  });

  it('ignores buffers it did not hand out, and a buffer given twice is kept once', () => {
    const pool = createBufferPool(4);
    pool.give(Buffer.alloc(1 << 20));
    const a = pool.take(5);
    pool.give(a);
    pool.give(a);
    expect(pool.take(5).buffer).toBe(a.buffer);
    expect(pool.take(5).buffer).not.toBe(a.buffer);
  });

  it('rounds a size up by at most an eighth, from 64 KiB, so nearby sizes share a buffer', () => {
    expect(roundedUp(10)).toBe(64 * 1024);
    expect(roundedUp(64 * 1024)).toBe(64 * 1024);
    for (const size of [65_537, 100_000, 1 << 20, (1 << 20) + 1, 19_100_000, 33_554_433]) {
      const rounded = roundedUp(size);
      expect(rounded).toBeGreaterThanOrEqual(size);
      expect(rounded - size).toBeLessThanOrEqual(size / 8);
    }
    // A page of 19.1 MB takes 20 MiB, not the 32 MiB of the next power of two; 19.5 MB fits the same buffer.
    expect(roundedUp(19_100_000)).toBe(20 * 1024 * 1024);
    expect(roundedUp(19_500_000)).toBe(roundedUp(19_100_000));
  });

  it('keeps at most maxFreeBytes() of free buffers: the smallest go first, one larger than the limit is dropped', () => {
    let limit = 3_200_000;
    const pool = createBufferPool(8, () => limit);
    const [small, mid, big] = [pool.take(100_000), pool.take(1_000_000), pool.take(2_000_000)];
    pool.give(small);
    pool.give(mid);
    // small and mid together leave no room for big: small goes, the rest fits.
    pool.give(big);
    expect(pool.take(2_000_000).buffer).toBe(big.buffer);
    expect(pool.take(1_000_000).buffer).toBe(mid.buffer);
    expect(pool.take(100_000).buffer).not.toBe(small.buffer);
    limit = 500_000;
    pool.give(mid);
    expect(pool.take(1_000_000).buffer).not.toBe(mid.buffer);
  });

  it('sheds free buffers when a buffer is taken and the bytes held have grown, so free and held stay under the cap', () => {
    let limit = 4_000_000;
    const pool = createBufferPool(8, () => limit);
    const [a, b] = [pool.take(1_000_000), pool.take(2_000_000)];
    pool.give(a);
    pool.give(b);
    // The walk now holds more: only the larger free buffer still fits beside it, and the smaller goes first.
    limit = 2_500_000;
    pool.take(10_000_000);
    expect(pool.take(2_000_000).buffer).toBe(b.buffer);
    expect(pool.take(1_000_000).buffer).not.toBe(a.buffer);
  });
});

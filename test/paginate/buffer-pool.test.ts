import { describe, expect, it } from 'vitest';
import { createBufferPool } from '../../src/paginate/buffer-pool.js';

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
});

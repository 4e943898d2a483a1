import { describe, expect, it } from 'vitest';
import { TokenBucket } from './token-bucket.js';

describe('TokenBucket', () => {
  const at = (t: { now: number }) => () => t.now;

  it('passes a burst at once, then makes takers wait for their bytes at the rate', () => {
    const t = { now: 0 };
    const b = new TokenBucket(10, 100, at(t)); // 10 bytes/ms, burst 100
    expect(b.reserve(60)).toBe(0);
    expect(b.reserve(40)).toBe(0);
    expect(b.reserve(50)).toBe(5);
  });

  it('queues takers behind the debt of earlier reservations, in order', () => {
    const t = { now: 0 };
    const b = new TokenBucket(10, 100, at(t));
    b.reserve(100);
    expect(b.reserve(100)).toBe(10);
    expect(b.reserve(100)).toBe(20);
    t.now = 20;
    expect(b.reserve(10)).toBe(1);
  });

  it('refills with time, never beyond the burst', () => {
    const t = { now: 0 };
    const b = new TokenBucket(10, 100, at(t));
    b.reserve(100);
    t.now = 5;
    expect(b.reserve(50)).toBe(0);
    t.now = 1_000_000;
    expect(b.reserve(100)).toBe(0);
    expect(b.reserve(10)).toBe(1);
  });

  it('refuses reservations larger than the burst, and a rate or burst that is not positive', () => {
    expect(() => new TokenBucket(10, 100).reserve(101)).toThrow(/burst/);
    expect(() => new TokenBucket(0, 100)).toThrow();
    expect(() => new TokenBucket(10, 0)).toThrow();
  });
});

import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_BACKOFF, isRetried, parseRetryAfter, retryDelay, sleep } from '../../src/http/retry.js';

const NOW = Date.parse('2025-01-01T00:00:00Z');

describe('parseRetryAfter (RFC 9110 §10.2.3)', () => {
  it('reads delay-seconds', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter(' 7 ', NOW)).toBe(7000);
  });

  it('reads an HTTP-date relative to now, never negative', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:59:00 GMT', NOW)).toBe(0);
  });

  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfter('soon', NOW)).toBeUndefined();
    expect(parseRetryAfter('1.5', NOW)).toBeUndefined();
    expect(parseRetryAfter('-3', NOW)).toBeUndefined();
  });
});

describe('backoff', () => {
  it('is full jitter under an exponential ceiling capped at maxDelayMs', () => {
    expect(backoffDelay(0, DEFAULT_BACKOFF, () => 0.999)).toBe(199);
    expect(backoffDelay(3, DEFAULT_BACKOFF, () => 0.5)).toBe(800);
    expect(backoffDelay(20, DEFAULT_BACKOFF, () => 0.999)).toBe(9990);
    expect(backoffDelay(5, DEFAULT_BACKOFF, () => 0)).toBe(0);
  });

  it('prefers Retry-After, capped', () => {
    const res = (v: string) => ({ status: 429, headers: { 'retry-after': v }, body: Buffer.alloc(0) });
    expect(retryDelay(0, res('2'), DEFAULT_BACKOFF, NOW, () => 0.5)).toBe(2000);
    expect(retryDelay(0, res('3600'), DEFAULT_BACKOFF, NOW, () => 0.5)).toBe(60_000);
    expect(retryDelay(1, res('nonsense'), DEFAULT_BACKOFF, NOW, () => 0.5)).toBe(200);
    expect(retryDelay(1, undefined, DEFAULT_BACKOFF, NOW, () => 0.5)).toBe(200);
  });

  it('never treats POST as retryable', () => {
    expect(isRetried('GET')).toBe(true);
    expect(isRetried('post')).toBe(false);
    expect(isRetried('PATCH')).toBe(false);
    expect(isRetried('PUT')).toBe(false);
    expect(isRetried('head')).toBe(true);
  });

  it('sleep stops at once on abort with the signal reason', async () => {
    const ac = new AbortController();
    const started = Date.now();
    const p = sleep(10_000, ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    // Half the sleep: what this catches is an abort that waits the sleep out, not a slow wake-up on a busy machine.
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  backoffFloor,
  DEFAULT_BACKOFF,
  isRetried,
  parseRetryAfter,
  retryDelay,
} from '../../src/http/retry.js';
import { sleep } from '../../src/clock.js';
import { FakeClock } from '../support/clock.js';

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
  it('is equal jitter: half the exponential ceiling, plus a draw over the other half, capped at maxDelayMs', () => {
    expect(backoffDelay(0, DEFAULT_BACKOFF, () => 0.999)).toBe(199);
    expect(backoffDelay(3, DEFAULT_BACKOFF, () => 0.5)).toBe(1200);
    expect(backoffDelay(20, DEFAULT_BACKOFF, () => 0.999)).toBe(9995);
    expect(backoffDelay(5, DEFAULT_BACKOFF, () => 0)).toBe(3200);
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((n) => backoffFloor(n, DEFAULT_BACKOFF))).toEqual([
      100, 200, 400, 800, 1600, 3200, 5000, 5000,
    ]);
  });
});

describe('retryDelay: Retry-After is the least wait, the backoff floor too', () => {
  const res = (retryAfter?: string) => ({
    status: 429,
    headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter },
    body: Buffer.alloc(0),
  });
  const ATTEMPTS = [0, 1, 2, 3, 4, 5];
  const delays = (r: ReturnType<typeof res> | undefined, random: number) =>
    ATTEMPTS.map((n) => retryDelay(n, r, DEFAULT_BACKOFF, NOW, () => random));
  const FLOORS = [100, 200, 400, 800, 1600, 3200];
  const HALFWAY = [150, 300, 600, 1200, 2400, 4800];

  it('no Retry-After, 0, a date in the past or one it cannot read: the backoff, never sooner than its floor', () => {
    for (const r of [undefined, res(), res('0'), res('Tue, 31 Dec 2024 23:59:00 GMT'), res('nonsense')]) {
      expect(delays(r, 0)).toEqual(FLOORS);
      expect(delays(r, 0.5)).toEqual(HALFWAY);
      expect(delays(r, 0.999)).toEqual([199, 399, 799, 1599, 3198, 6396]);
    }
  });

  it('a small Retry-After: the larger of it and the floor, plus the jitter', () => {
    expect(delays(res('1'), 0)).toEqual([1000, 1000, 1000, 1000, 1600, 3200]);
    expect(delays(res('1'), 0.5)).toEqual([1050, 1100, 1200, 1400, 2400, 4800]);
    // A date 1 s ahead is the same wait.
    expect(delays(res('Wed, 01 Jan 2025 00:00:01 GMT'), 0.5)).toEqual([1050, 1100, 1200, 1400, 2400, 4800]);
  });

  it('spreads clients told the same Retry-After, all of them waiting at least as long as it asks', () => {
    const spread = [0, 0.25, 0.5, 0.75, 0.999].map((x) => retryDelay(3, res('2'), DEFAULT_BACKOFF, NOW, () => x));
    expect(spread).toEqual([2000, 2200, 2400, 2600, 2799]);
  });

  it('a long Retry-After is clamped to 60 s, the jitter included', () => {
    expect(delays(res('3600'), 0.5)).toEqual(ATTEMPTS.map(() => 60_000));
    expect(delays(res('60'), 0)).toEqual(ATTEMPTS.map(() => 60_000));
    expect(delays(res('59'), 0.5)).toEqual([59_050, 59_100, 59_200, 59_400, 59_800, 60_000]);
  });

  it('the clamp shortens a Retry-After, never the backoff', () => {
    const policy = { ...DEFAULT_BACKOFF, maxRetryAfterMs: 500 };
    expect(ATTEMPTS.map((n) => retryDelay(n, res('3600'), policy, NOW, () => 0.5))).toEqual([
      500, 500, 600, 1200, 2400, 4800,
    ]);
  });

  it('whatever the draw, never less than the floor nor than Retry-After, never more than the clamp', () => {
    for (const hint of [undefined, '0', '1', '7', '3600', 'Tue, 31 Dec 2024 23:59:00 GMT']) {
      const asked = hint === undefined ? 0 : (parseRetryAfter(hint, NOW) as number);
      for (const n of ATTEMPTS)
        for (const x of [0, 0.1, 0.5, 0.9, 0.999999]) {
          const d = retryDelay(n, res(hint), DEFAULT_BACKOFF, NOW, () => x);
          expect(d).toBeGreaterThanOrEqual(Math.max(backoffFloor(n, DEFAULT_BACKOFF), Math.min(asked, 60_000)));
          expect(d).toBeLessThanOrEqual(60_000);
        }
    }
  });
});

describe('retrying', () => {
  it('never treats POST as retryable', () => {
    expect(isRetried('GET')).toBe(true);
    expect(isRetried('post')).toBe(false);
    expect(isRetried('PATCH')).toBe(false);
    expect(isRetried('PUT')).toBe(false);
    expect(isRetried('head')).toBe(true);
  });

  it('sleep stops at once on abort with the signal reason', async () => {
    const clock = new FakeClock();
    const started = clock.now();
    const ac = new AbortController();
    const p = sleep(clock, 10_000, ac.signal);
    expect(clock.pending()).toEqual([10_000]);
    ac.abort(new Error('stop'));
    // Rejects with the clock never moved: a sleep that waited itself out would not settle until it did.
    await expect(p).rejects.toThrow('stop');
    expect(clock.now()).toBe(started);
    expect(clock.pending()).toEqual([]); // and its timer is gone
  });

  it('sleep resolves once its time has passed on its clock, not before', async () => {
    const clock = new FakeClock();
    let woke = false;
    const p = sleep(clock, 10_000, new AbortController().signal).then(() => (woke = true));
    clock.advance(9_999);
    await Promise.resolve();
    expect(woke).toBe(false);
    clock.advance(1);
    await p;
    expect(woke).toBe(true);
  });

  it('sleep rejects at once when the signal has already aborted', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    ac.abort(new Error('already'));
    await expect(sleep(clock, 10_000, ac.signal)).rejects.toThrow('already');
    expect(clock.pending()).toEqual([]);
  });
});

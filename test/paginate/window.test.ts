import { describe, expect, it } from 'vitest';
import { Window, WINDOW_BYTES, WINDOW_CEILING, type WindowChange } from '../../src/paginate/window.js';

/** A window and the changes it told, fed pages that all take `ms` and are `bytes` long. */
function window(start: number, adaptive = true) {
  const changes: WindowChange[] = [];
  const w = new Window({ start, adaptive, onChange: (c) => changes.push(c) });
  let now = 0;
  /** `n` pages sent at `now`, each taken by a walk that waited for it (or not); the window allowed after them. */
  const pages = (n: number, { ms = 100, bytes = 1000, waited = true } = {}) => {
    for (let i = 0; i < n; i++) w.taken(now, w.arrived(ms, bytes, false), waited, now + ms);
    now += ms;
    return w.allowed;
  };
  return {
    w,
    changes,
    pages,
    at: () => now,
    tick: (ms: number) => (now += ms),
  };
}

/**
 * A walk against a server that answers each page `latency` ms after it is sent and, past that, one page every
 * `service` ms (a single worker, or a link with room for one page at a time): the pages come back in order and the
 * walk takes each as it arrives, then sends as many as the window allows. Returns the most pages ever in flight.
 */
function queueing(w: Window, pages: number, { latency, service }: { latency: number; service: number }): number {
  const inFlight: number[] = [];
  let now = 0;
  let last = 0;
  let most = 0;
  let sent = 0;
  const fill = () => {
    while (sent < pages && inFlight.length < w.allowed) {
      // Sent just after the page before was taken, as the walk does.
      inFlight.push(now + 0.01);
      sent++;
    }
    most = Math.max(most, inFlight.length);
  };
  fill();
  while (inFlight.length > 0) {
    const sentAt = inFlight.shift()!;
    last = Math.max(sentAt + latency, last + service);
    now = last;
    w.taken(sentAt, w.arrived(now - sentAt, 1000, false), true, now);
    fill();
  }
  return most;
}

describe('the window of --concurrency auto', () => {
  it('grows by one per two pages that keep up while the walk waits, up to the ceiling', () => {
    const t = window(4);
    t.pages(1);
    expect(t.pages(4)).toBe(6);
    expect(t.pages(6)).toBe(9);
    expect(t.pages(100)).toBe(WINDOW_CEILING);
    expect(t.changes.at(-1)).toEqual({ from: 31, to: 32, reason: 'pages come back as fast as the first ones' });
  });

  it('does not grow on pages slower than twice the fastest, nor while the walk is not waiting for pages', () => {
    const t = window(4);
    t.pages(2, { ms: 100 });
    expect(t.pages(10, { ms: 300 })).toBe(5);
    const idle = window(4);
    expect(idle.pages(50, { waited: false })).toBe(4);
  });

  it('halves on a 429 once per round, holds new requests for the Retry-After, then grows only after a quiet stretch', () => {
    const t = window(4);
    expect(t.pages(24)).toBe(16);
    const sent = t.at();
    t.tick(10);
    t.w.throttled(sent, t.at(), 'HTTP 429', 1000);
    // Other answers to requests sent before the cut do not cut again.
    t.w.throttled(sent, t.at() + 5, 'HTTP 429', 1000);
    expect(t.w.allowed).toBe(8);
    expect(t.changes.at(-1)).toEqual({
      from: 16,
      to: 8,
      reason: 'the server answered HTTP 429; no new request for 1.0 s',
    });
    // The later answer's Retry-After runs the longer.
    expect(t.w.delay(t.at())).toBe(1005);
    expect(t.w.delay(t.at() + 1005)).toBe(0);
    // Pages sent before the cut, then a window of pages sent after it: no growth yet.
    t.w.taken(sent, true, true, t.at());
    t.tick(1000);
    expect(t.pages(8)).toBe(8);
    // Then one more page in flight per window of good pages.
    expect(t.pages(8)).toBe(9);
    expect(t.pages(9)).toBe(10);
    // A 429 to a request sent after the cut cuts again.
    t.w.throttled(t.at(), t.at() + 1, 'HTTP 503', 0);
    expect(t.w.allowed).toBe(5);
  });

  it('stops growing at twice the pages taken in the fastest round trip: past that, pages only queue', () => {
    // One page per 2 ms after 6 ms: the fastest page takes 6 ms, in which 3 pages come back; 6 in flight keep the
    // server busy twice over. Each page's time against the fastest alone, with its slack for jitter, allows far more.
    const changes: WindowChange[] = [];
    const w = new Window({ start: 4, adaptive: true, onChange: (c) => changes.push(c) });
    const most = queueing(w, 500, { latency: 6, service: 2 });
    expect(most).toBeGreaterThanOrEqual(6);
    expect(most).toBeLessThanOrEqual(7);
    expect(changes.filter((c) => c.from === c.to).map((c) => c.reason)).toEqual([
      'pages come back no sooner with more in flight',
    ]);
  });

  it('still grows to the ceiling where each page waits for the round trip, not for the others', () => {
    const w = new Window({ start: 4, adaptive: true });
    expect(queueing(w, 500, { latency: 100, service: 1 })).toBe(WINDOW_CEILING);
  });

  it('--concurrency n stays n: no growth, no cut, no pause', () => {
    const t = window(6, false);
    t.pages(50);
    t.w.throttled(t.at(), t.at(), 'HTTP 429', 5000);
    expect(t.w.allowed).toBe(6);
    expect(t.w.delay(t.at())).toBe(0);
    expect(t.changes).toEqual([]);
  });

  it.each([true, false])('caps the bytes waiting in the window (adaptive %s), and says so once', (adaptive) => {
    const t = window(16, adaptive);
    const bytes = 20 * 1024 * 1024;
    expect(t.pages(1, { bytes })).toBe(Math.floor(WINDOW_BYTES / bytes));
    expect(t.pages(3, { bytes: 50 * 1024 * 1024 })).toBe(1);
    expect(t.changes.filter((c) => c.reason.startsWith('pages of'))).toEqual([
      { from: 16, to: 3, reason: 'pages of 20.0 MB, at most 64.0 MB of them waiting' },
    ]);
  });

  it('counts the page being written against the byte cap, not against the window, and leaves room for one', () => {
    const t = window(16);
    expect(t.w.room(50 * 1024 * 1024)).toBe(16);
    const bytes = 20 * 1024 * 1024;
    t.pages(1, { bytes });
    expect(t.w.allowed).toBe(3);
    expect(t.w.room(bytes)).toBe(2);
    expect(t.w.room(60 * 1024 * 1024)).toBe(1);
    const small = window(4);
    small.pages(1, { bytes: 100_000 });
    expect(small.w.room(100_000)).toBe(4);
  });
});

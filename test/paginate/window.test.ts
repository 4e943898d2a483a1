import { describe, expect, it } from 'vitest';
import { Window, WINDOW_CEILING, type WindowChange } from '../../src/paginate/window.js';

/** A window and the changes it told, fed pages that all take `ms`. */
function window(start: number, adaptive = true) {
  const changes: WindowChange[] = [];
  const w = new Window({ start, adaptive, onChange: (c) => changes.push(c) });
  let now = 0;
  /** `n` pages sent at `now`, each taken by a walk that waited for it (or not); the window allowed after them. */
  const pages = (n: number, { ms = 100, waited = true, load = 1 } = {}) => {
    for (let i = 0; i < n; i++) w.taken({ sentAt: now, ms, firstByteMs: ms, retried: false, load }, waited, now + ms);
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
  const inFlight: { sentAt: number; load: number }[] = [];
  let now = 0;
  let last = 0;
  let most = 0;
  let sent = 0;
  const fill = () => {
    while (sent < pages && inFlight.length < w.allowed) {
      // Sent just after the page before was taken, as the walk does.
      inFlight.push({ sentAt: now + 0.01, load: inFlight.length + 1 });
      sent++;
    }
    most = Math.max(most, inFlight.length);
  };
  fill();
  while (inFlight.length > 0) {
    const { sentAt, load } = inFlight.shift()!;
    last = Math.max(sentAt + latency, last + service);
    now = last;
    w.taken({ sentAt, ms: now - sentAt, firstByteMs: now - sentAt, retried: false, load }, true, now);
    fill();
  }
  return most;
}

/**
 * A walk against a server that answers each page after `latency(n)` ms, n being the pages in flight when it was sent
 * (itself included). Pages are taken in order, each when it is in; the window then fills. Returns the time the walk
 * took, the most pages ever in flight, and the window at the end.
 */
function loaded(w: Window, pages: number, latency: (n: number) => number) {
  const inFlight: { sentAt: number; load: number; doneAt: number }[] = [];
  let now = 0;
  let most = 0;
  let sent = 0;
  const fill = () => {
    while (sent < pages && inFlight.length < w.allowed) {
      const load = inFlight.length + 1;
      inFlight.push({ sentAt: now, load, doneAt: now + latency(load) });
      sent++;
    }
    most = Math.max(most, inFlight.length);
  };
  fill();
  while (inFlight.length > 0) {
    const { sentAt, load, doneAt } = inFlight.shift()!;
    const waited = doneAt > now;
    now = Math.max(now, doneAt);
    w.taken({ sentAt, ms: doneAt - sentAt, firstByteMs: doneAt - sentAt, retried: false, load }, waited, now);
    fill();
  }
  return { ms: now, most, allowed: w.allowed };
}

/**
 * A walk against a server that answers each page `latency` ms after it arrives, and at once with a 429 that asks
 * for `retryAfter` ms when `max` pages are in flight at it already; the page is then sent again. Pages are taken in
 * order, each when it is in; the window then fills. Returns the 429s answered and the most pages ever in flight.
 */
function rateLimited(
  w: Window,
  pages: number,
  { latency, max, retryAfter }: { latency: number; max: number; retryAfter: number },
) {
  interface Sent {
    sentAt: number;
    load: number;
    /** When its latest attempt reaches the server, and when that attempt is answered once known. */
    attemptAt: number;
    doneAt?: number;
    retried: boolean;
  }
  const queue: Sent[] = [];
  const answered: { from: number; to: number }[] = [];
  let now = 0;
  let sent = 0;
  let refused = 0;
  let most = 0;
  const fill = () => {
    while (sent < pages && queue.length < w.allowed) {
      const at = now + w.delay(now);
      queue.push({ sentAt: at, load: queue.length + 1, attemptAt: at, retried: false });
      sent++;
    }
    most = Math.max(most, queue.length);
  };
  /** The server's answer to the earliest attempt not yet answered: a page in `latency`, or a 429 at once. */
  const decide = (p: Sent) => {
    const at = p.attemptAt;
    const busy = answered.filter((a) => a.from <= at && at < a.to).length;
    if (busy < max) {
      p.doneAt = at + latency;
      answered.push({ from: at, to: p.doneAt });
      return;
    }
    refused++;
    p.retried = true;
    w.throttled(p.sentAt, at, 'HTTP 429', retryAfter, p.load);
    p.attemptAt = at + retryAfter;
  };
  fill();
  while (queue.length > 0) {
    const head = queue[0]!;
    const open = queue.filter((p) => p.doneAt === undefined);
    const next = open.reduce<Sent | undefined>(
      (a, p) => (a === undefined || p.attemptAt < a.attemptAt ? p : a),
      undefined,
    );
    if (next !== undefined && (head.doneAt === undefined || next.attemptAt <= head.doneAt)) {
      decide(next);
      continue;
    }
    queue.shift();
    const waited = head.doneAt! > now;
    now = Math.max(now, head.doneAt!);
    const ms = head.doneAt! - head.sentAt;
    w.taken({ sentAt: head.sentAt, ms, firstByteMs: ms, retried: head.retried, load: head.load }, waited, now);
    fill();
  }
  return { refused, most, ms: now };
}

describe('the window of --concurrency auto', () => {
  it('grows by one per two pages that keep up while the walk waits, up to the ceiling', () => {
    const t = window(4);
    t.pages(1);
    expect(t.pages(4)).toBe(6);
    expect(t.changes[0]).toEqual({ from: 4, to: 5, reason: 'pages come back as fast as the first ones' });
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
    t.w.throttled(sent, t.at(), 'HTTP 429', 1000, 16);
    // Other answers to requests sent before the cut do not cut again.
    t.w.throttled(sent, t.at() + 5, 'HTTP 429', 1000, 16);
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
    t.w.taken({ sentAt: sent, ms: 100, firstByteMs: 100, retried: false, load: 16 }, true, t.at());
    t.tick(1000);
    expect(t.pages(8)).toBe(8);
    // Then one more page in flight per window of good pages.
    expect(t.pages(8)).toBe(9);
    expect(t.pages(9)).toBe(10);
    // A 429 to a request sent after the cut cuts again.
    t.w.throttled(t.at(), t.at() + 1, 'HTTP 503', 0, 10);
    expect(t.w.allowed).toBe(5);
    // With no Retry-After to wait for, the note says nothing of one.
    expect(t.changes.at(-1)).toEqual({ from: 10, to: 5, reason: 'the server answered HTTP 503' });
  });

  it('halves the starting window on a 429 among the first pages, before it has grown', () => {
    const t = window(4);
    t.pages(1);
    t.w.throttled(t.at(), t.at() + 1, 'HTTP 429', 0, 4);
    expect(t.w.allowed).toBe(2);
    expect(t.changes).toEqual([{ from: 4, to: 2, reason: 'the server answered HTTP 429' }]);
  });

  it('against a server that refuses more than 6 in flight: grows past it, halves, and meets a handful of 429s, not one a page', () => {
    const changes: WindowChange[] = [];
    const w = new Window({ start: 4, adaptive: true, onChange: (c) => changes.push(c) });
    const { refused, most } = rateLimited(w, 60, { latency: 300, max: 6, retryAfter: 1000 });
    expect(most).toBeGreaterThan(6);
    expect(refused).toBeGreaterThan(0);
    expect(refused).toBeLessThanOrEqual(6);
    const cuts = changes.filter((c) => c.reason.startsWith('the server answered HTTP 429'));
    expect(cuts.length).toBeGreaterThan(0);
    for (const c of cuts) {
      expect(c.from).toBeGreaterThan(6);
      expect(c).toEqual({
        from: c.from,
        to: Math.floor(c.from / 2),
        reason: 'the server answered HTTP 429; no new request for 1.0 s',
      });
    }
  });

  it('probes past a load that drew a 429 only after ten times its Retry-After: a probe costs that wait', () => {
    // Pages come back in 2 ms and a 429 asks for 1 s: probing again every few round trips would spend the walk waiting.
    const changes: WindowChange[] = [];
    const w = new Window({ start: 4, adaptive: true, onChange: (c) => changes.push(c) });
    const { refused, ms } = rateLimited(w, 3000, { latency: 2, max: 6, retryAfter: 1000 });
    // 3000 pages at up to 6 in flight take a second, and each 429 a second more.
    expect(refused).toBeGreaterThan(0);
    expect(refused).toBeLessThanOrEqual(2);
    expect(ms).toBeLessThan(1000 * (refused + 1) + 500);
    expect(changes.some((c) => /^HTTP 429 came with 7 in flight; more is tried in \d+ s$/.test(c.reason))).toBe(true);
  });

  it('stops growing at twice the pages taken in the fastest round trip: past that, pages only queue', () => {
    // One page per 2 ms after 6 ms: the fastest page takes 6 ms, in which 3 pages come back; 6 in flight keep the
    // server busy twice over. Each page's time against the fastest alone, with its slack for jitter, allows far more.
    const changes: WindowChange[] = [];
    const w = new Window({ start: 4, adaptive: true, onChange: (c) => changes.push(c) });
    const most = queueing(w, 500, { latency: 6, service: 2 });
    expect(most).toBeGreaterThanOrEqual(6);
    expect(most).toBeLessThanOrEqual(7);
    expect(changes.filter((c) => c.from === c.to).map((c) => c.reason)).toContain(
      'pages come back no sooner with more in flight',
    );
    // Each hold is told once for the size it holds: never as a size the window then leaves by growing.
    for (const [i, c] of changes.entries()) {
      if (c.from === c.to) expect(changes.slice(i + 1).every((d) => d.from >= c.to || d.to <= c.to)).toBe(true);
    }
  });

  it('still grows to the ceiling where each page waits for the round trip, not for the others', () => {
    const w = new Window({ start: 4, adaptive: true });
    expect(queueing(w, 500, { latency: 100, service: 1 })).toBe(WINDOW_CEILING);
  });

  describe('against a server that slows with load', () => {
    const cliff = (n: number) => (n <= 6 ? 20 : 20 * n * n);
    const queue = (n: number) => 20 + 15 * n;

    it.each([
      ['20 ms, 20·n² ms above 6 in flight', cliff],
      ['20 ms + 15 ms per page in flight', queue],
    ])('comes down, and auto takes at most 1.5x the time of -c 4 and less than -c 1 (%s)', (_, latency) => {
      const time = (start: number, adaptive: boolean) => loaded(new Window({ start, adaptive }), 3000, latency);
      const auto = time(4, true);
      expect(auto.ms).toBeLessThanOrEqual(1.5 * time(4, false).ms);
      expect(auto.ms).toBeLessThan(time(1, false).ms);
      // The window never stays where pages slowed.
      if (latency === cliff) expect(auto.allowed).toBeLessThanOrEqual(6);
    });

    it('comes down by the ratio of the time that keeps up to the slowed page, at most halved, and says why', () => {
      const t = window(4);
      t.pages(1, { ms: 20 });
      expect(t.pages(16, { ms: 20 })).toBe(12);
      // 4·20 + 20 = 100 ms is still within the band: no cut.
      expect(t.pages(1, { ms: 100, load: 12 })).toBe(12);
      // 1000 ms is ten times the 100 ms the band allows: halved.
      expect(t.pages(1, { ms: 1000, load: 9 })).toBe(6);
      expect(t.changes.at(-1)).toEqual({
        from: 12,
        to: 6,
        reason:
          'a page sent with 9 in flight began to come back after 1000 ms, the fastest after 20 ms; at most 8 from now on',
      });
      // Pages sent before the cut do not cut again; then it grows back, never past 8.
      t.w.taken({ sentAt: 0, ms: 1000, firstByteMs: 1000, retried: false, load: 9 }, true, t.at());
      expect(t.w.allowed).toBe(6);
      expect(t.pages(200, { ms: 20, load: 8 })).toBe(8);
      expect(t.changes.at(-1)).toEqual({ from: 8, to: 8, reason: 'a page slowed with 9 in flight' });
      // A page sent after the cut that slowed by less: down by the ratio, 100/150 of 8.
      expect(t.pages(1, { ms: 150, load: 8 })).toBe(6);
      expect(t.changes.at(-1)?.reason).toMatch(/at most 7 from now on$/);
    });

    it('does not come down on a page that only took longer to transfer: its first byte came as fast', () => {
      const t = window(8);
      t.pages(1, { ms: 20 });
      t.w.taken({ sentAt: t.at(), ms: 5000, firstByteMs: 20, retried: false, load: 8 }, true, t.at() + 5000);
      expect(t.w.allowed).toBe(8);
      expect(t.changes).toEqual([]);
    });

    it('does not come down on a slow page the walk did not wait for, a retried page, or one sent alone', () => {
      const t = window(8);
      t.pages(1, { ms: 20 });
      expect(t.pages(1, { ms: 1000, load: 8, waited: false })).toBe(8);
      t.w.taken({ sentAt: t.at(), ms: 1000, firstByteMs: 1000, retried: true, load: 8 }, true, t.at() + 1000);
      expect(t.pages(1, { ms: 1000, load: 1 })).toBe(8);
      expect(t.changes).toEqual([]);
    });
  });

  it('--concurrency n stays n: no growth, no cut, no pause', () => {
    const t = window(6, false);
    t.pages(50);
    t.pages(5, { ms: 5000, load: 6 });
    t.w.throttled(t.at(), t.at(), 'HTTP 429', 5000, 6);
    expect(t.w.allowed).toBe(6);
    expect(t.w.delay(t.at())).toBe(0);
    expect(t.changes).toEqual([]);
  });
});

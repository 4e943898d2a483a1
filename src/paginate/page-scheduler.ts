/**
 * When each of the walk's page requests goes out: up to the window, after a Retry-After still running, within the byte
 * budget, each timed for the window and given a recycled buffer. The request itself is get-page.ts's.
 */
import { setMaxListeners } from 'node:events';
import { type Clock, sleep } from '../clock.js';
import type { RetryInfo } from '../http/client.js';
import { createBufferPool } from './buffer-pool.js';
import { ByteBudget, WINDOW_BYTES } from './byte-budget.js';
import { type FetchContext, fetchRaw, type RawPage } from './get-page.js';
import { type TakenPage, Window, WINDOW_CEILING, type WindowChange } from './window.js';

/** A page request under way. */
export interface Pending<T> {
  url: string;
  /** The page's number in the byte budget. */
  seq: number;
  promise: Promise<T>;
  /** Filled in as the request goes: what the window learns from it. */
  timing: Timing;
}

interface Timing extends TakenPage {
  /** The body is in. */
  arrived: boolean;
}

/** The walk's page requests: when each starts, its timing (for the window), its bytes (the budget) and buffers. */
export class PageScheduler {
  /** Aborted when the walk ends, cancelling fetches nobody will write (one signal: a controller per page costs more). */
  readonly finished = new AbortController();
  readonly signal: AbortSignal;
  /** Pages the walk by pageIndex may hold in flight. */
  readonly window: Window;
  /** The bytes of the pages in flight, waiting and being written. */
  private readonly budget: ByteBudget;
  /** Page bodies are recycled once written: in flight are at most a window of pages plus one prefetch. */
  private readonly bodies: ReturnType<typeof createBufferPool>;
  private readonly fetchCtx: FetchContext;
  /** The run's clock: the window's timings and a Retry-After's wait. */
  private readonly clock: Clock;
  /** Page requests sent and not yet answered. */
  private inFlight = 0;

  /** `concurrency` pages at a time in the walk by pageIndex, at the start when `adaptive`. */
  constructor(
    ctx: {
      fetch: Pick<FetchContext, 'client'>;
      clock: Clock;
      interrupt: AbortSignal;
      readerGone: AbortSignal;
      onWindow?: (change: WindowChange) => void;
    },
    concurrency: number,
    adaptive: boolean,
  ) {
    this.clock = ctx.clock;
    this.window = new Window({ start: concurrency, adaptive, onChange: ctx.onWindow });
    this.budget = new ByteBudget(undefined, (largest, cap) => {
      const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
      const from = this.window.allowed;
      const to = Math.max(1, Math.min(from, Math.floor(cap / largest)));
      ctx.onWindow?.({
        from,
        to,
        reason: `pages of ${mb(largest)}, at most ${mb(cap)} of them held besides the next to write`,
      });
    });
    const most = adaptive ? Math.max(WINDOW_CEILING, concurrency) : concurrency;
    this.signal = AbortSignal.any([ctx.interrupt, ctx.readerGone, this.finished.signal]);
    // Every request in flight and every wait between retries listens on it: by design, not a leak worth a warning.
    setMaxListeners(2 * (most + 1) + 10, this.signal);
    // Free page buffers and the pages held share the byte cap: a buffer kept for reuse is memory as much as a page.
    this.bodies = createBufferPool(most + 2, () => WINDOW_BYTES - this.budget.bytes);
    this.fetchCtx = { client: ctx.fetch.client, bodyBuffer: (size) => this.bodies.take(size) };
  }

  /** Whether a page as large as the largest so far fits in the byte budget. */
  get roomForOne(): boolean {
    return this.budget.roomForOne;
  }

  /** Starts fetching a page, not before a Retry-After still running; the window learns how the page came. */
  start(url: string): Pending<RawPage> {
    const wait = this.window.delay(this.clock.monotonic());
    const timing: Timing = { sentAt: 0, ms: 0, firstByteMs: -1, retried: false, load: 0, arrived: false };
    const seq = this.budget.start();
    const promise = (wait > 0 ? sleep(this.clock, wait, this.signal) : Promise.resolve()).then(() =>
      this.timed(url, timing, seq),
    );
    // Rejections are consumed where the page is awaited; this only keeps an abandoned prefetch quiet.
    promise.catch(() => {});
    return { url, seq, promise, timing };
  }

  /** A page of the window has been awaited: the window is told whether the walk had to wait for it, and how it came. */
  taken(p: Pending<RawPage>, waited: boolean): void {
    this.window.taken(p.timing, waited, this.clock.monotonic());
  }

  /** A page that failed or will not be written: its bytes leave the budget. */
  release(seq: number): void {
    this.budget.release(seq);
  }

  /** The oldest page held has been written: its bytes leave the budget, its body is free for another page. */
  written(body: Buffer): void {
    this.budget.releaseOldest();
    this.bodies.give(body);
  }

  /** Pages in flight nobody will write: their bytes leave the budget now, their requests end with the walk. */
  drop(queue: Pending<RawPage>[]): void {
    for (const p of queue) this.budget.release(p.seq);
    queue.length = 0;
  }

  /** One page's request, timed for the window. */
  private async timed(url: string, timing: Timing, seq: number): Promise<RawPage> {
    const sentAt = (timing.sentAt = this.clock.monotonic());
    timing.load = ++this.inFlight;
    const onRetry = ({ status, reason, delayMs }: RetryInfo): void => {
      timing.retried = true;
      if (status === 429 || status === 503)
        this.window.throttled(sentAt, this.clock.monotonic(), reason, delayMs, timing.load);
    };
    try {
      const onBodyBytes = (bytes: number, resume: () => void): boolean => {
        // The latest attempt's first byte: a retried page's time does not count anyway.
        if (timing.firstByteMs < 0) timing.firstByteMs = this.clock.monotonic() - sentAt;
        return this.budget.hold(seq, bytes, resume);
      };
      const raw = await fetchRaw({ ...this.fetchCtx, onRetry, onBodyBytes }, url, this.signal);
      timing.ms = this.clock.monotonic() - sentAt;
      // An empty body has no first byte before its end.
      if (timing.firstByteMs < 0) timing.firstByteMs = timing.ms;
      timing.arrived = true;
      return raw;
    } finally {
      this.inFlight--;
    }
  }
}

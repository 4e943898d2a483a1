/**
 * How many pages a walk by pageIndex may hold in flight: additive increase, multiplicative decrease, as TCP's
 * congestion window. Under `--concurrency auto` the window starts where it is given, grows by one for every two pages
 * that came back about as fast as the fastest page so far while the walk waits for pages (half again per round
 * trip, up to WINDOW_CEILING),
 * halves on a 429 or 503, pauses new requests for the Retry-After, and after a cut grows again only after a quiet
 * stretch: as many pages as the window holds, all sent after the cut, then by one per window of good pages. It grows
 * no further than twice the pages the walk takes in the fastest page's round trip (BBR's bound on what is in
 * flight): past that, pages only queue (at the server, on the link, or in a client whose CPU is the limit). A
 * number given with `--concurrency n` stays n. Whatever the window, the bytes of the pages waiting in it and of the
 * one being written are capped at WINDOW_BYTES. Pure: the walk reports pages and throttling, with times from its own clock.
 */

/** The most pages `--concurrency auto` keeps in flight. */
export const WINDOW_CEILING = 32;
/** The bytes of the pages waiting in the window and being written, at most (estimated from the largest page so far). */
export const WINDOW_BYTES = 64 * 1024 * 1024;
/**
 * A page "keeps up" when it comes back within twice the fastest page's time, plus a little for jitter: slower
 * means the requests now queue somewhere (the link, the server), and more of them would only wait longer.
 */
const KEEPS_UP = (fastest: number, ms: number): boolean => ms <= 2 * fastest + 10;
/**
 * How many times the pages taken in the fastest round trip the window may hold: headroom for the rate to be measured
 * higher as the window grows, while it is not yet the limit.
 */
const PACE_GAIN = 2;

export interface WindowChange {
  from: number;
  to: number;
  reason: string;
}

export interface WindowOptions {
  start: number;
  /** `--concurrency auto`: grow and shrink; otherwise the window stays `start` (the byte cap still applies). */
  adaptive: boolean;
  ceiling?: number;
  maxBytes?: number;
  onChange?: (change: WindowChange) => void;
}

export class Window {
  private size: number;
  private readonly ceiling: number;
  private readonly maxBytes: number;
  /** The fastest page so far (ms), requests that were retried aside. */
  private fastest = Number.POSITIVE_INFINITY;
  /** The largest page body so far, in bytes. */
  private pageBytes = 0;
  /** Whether the byte cap has held the window (told once). */
  private capped = false;
  /** When the window was last halved; -Infinity before the first cut. */
  private lastCut = Number.NEGATIVE_INFINITY;
  /** Good pages sent after the last cut still to come before growth resumes: the window after the cut. */
  private quiet = 0;
  /** Good pages towards the next increase after a cut (one per window of them). */
  private credit = 0;
  /** No new request before this time (Retry-After). */
  private resumeAt = 0;
  /** Pages taken by the walk so far, and that count when it last had to wait for one. */
  private takenCount = 0;
  private lastWait = Number.NEGATIVE_INFINITY;
  /** When the latest pages were taken (twice the ceiling's worth at most), oldest first. */
  private readonly takenAt: number[] = [];
  /** The latest rates (pages taken per ms over a page's round trip), one per page, oldest first. */
  private readonly rates: number[] = [];
  /** Whether the pace has held the window (told once). */
  private paced = false;

  constructor(private readonly options: WindowOptions) {
    this.size = Math.max(1, options.start);
    this.ceiling = options.ceiling ?? WINDOW_CEILING;
    this.maxBytes = options.maxBytes ?? WINDOW_BYTES;
  }

  /** The pages that may wait in the window now: its size, or fewer when their bytes would pass the cap. */
  get allowed(): number {
    return Math.min(this.size, this.byteLimit);
  }

  /**
   * The pages that may wait in the window while the walk holds `held` bytes of a page it is writing: that page's
   * buffer counts against the byte cap until it is written, not against the window's size (at least one page).
   */
  room(held: number): number {
    if (this.pageBytes === 0) return this.allowed;
    return Math.min(this.allowed, Math.max(1, Math.floor((this.maxBytes - held) / this.pageBytes)));
  }

  /** The most pages of the largest size so far that fit under the byte cap (at least one). */
  private get byteLimit(): number {
    return this.pageBytes === 0 ? Number.POSITIVE_INFINITY : Math.max(1, Math.floor(this.maxBytes / this.pageBytes));
  }

  /** How long a new request should wait before it is sent (a Retry-After still running), in ms. */
  delay(now: number): number {
    return Math.max(0, this.resumeAt - now);
  }

  /** A page came back `ms` after it was sent, `bytes` long; whether it kept up (see KEEPS_UP). */
  arrived(ms: number, bytes: number, retried: boolean): boolean {
    if (bytes > this.pageBytes) {
      const before = this.allowed;
      this.pageBytes = bytes;
      if (this.allowed < before) this.noteCap(before);
    }
    // A retried page's time is mostly the wait the server asked for.
    if (retried) return false;
    this.fastest = Math.min(this.fastest, ms);
    return KEEPS_UP(this.fastest, ms);
  }

  /**
   * The walk took the next page of the window (sent at `sentAt`) at `now`, having had to wait for it or not. The
   * window grows only while the walk waits for pages: when it writes more slowly than they come (a slow reader, a
   * busy CPU) they pile up anyway, and more in flight would only hold memory and run further ahead of the reader.
   */
  taken(sentAt: number, keptUp: boolean, waited: boolean, now: number): void {
    if (waited) this.lastWait = this.takenCount;
    this.takenCount++;
    this.measureRate(sentAt, now);
    const waiting = this.takenCount - this.lastWait <= this.size;
    if (!this.options.adaptive || !keptUp || !waiting || this.size >= this.ceiling) return;
    if (this.lastCut === Number.NEGATIVE_INFINITY) {
      // Half a page per good page: half again per round trip. Doubling (TCP's slow start) overshoots a server's limit
      // by as many requests as the limit itself, and each of them is a 429 and a retry that collide once more.
      this.credit++;
      if (this.credit < 2) return;
      this.credit = 0;
      return this.grow('pages come back as fast as the first ones');
    }
    // After a cut: the pages sent before it say nothing about the new window.
    if (sentAt < this.lastCut) return;
    if (this.quiet > 0) {
      this.quiet--;
      return;
    }
    this.credit++;
    if (this.credit < this.size) return;
    this.credit = 0;
    this.grow('no 429 or 503 since the last cut, and pages come back as fast as the first ones');
  }

  /**
   * The server asked for less (a 429 or 503, `reason` e.g. "HTTP 429") to a request sent at `sentAt`, which is
   * retried after `delayMs`. Halves the window once per round: requests sent before the last cut do not cut again.
   */
  throttled(sentAt: number, now: number, reason: string, delayMs: number): void {
    if (!this.options.adaptive) return;
    this.resumeAt = Math.max(this.resumeAt, now + delayMs);
    if (sentAt < this.lastCut) return;
    const from = this.size;
    this.size = Math.max(1, Math.floor(from / 2));
    this.lastCut = now;
    this.quiet = this.size;
    this.credit = 0;
    const wait = delayMs > 0 ? `; no new request for ${(delayMs / 1000).toFixed(1)} s` : '';
    if (this.size !== from) this.tell(from, this.size, `the server answered ${reason}${wait}`);
  }

  /**
   * The pages the walk took while this one was in flight (itself included), per ms of its round trip: what the whole
   * chain (server, link, this process) delivers. Kept for the latest pages only.
   */
  private measureRate(sentAt: number, now: number): void {
    const most = 2 * this.ceiling;
    this.takenAt.push(now);
    if (this.takenAt.length > most) this.takenAt.shift();
    if (now <= sentAt) return;
    const during = this.takenAt.filter((t) => t >= sentAt).length;
    this.rates.push(during / (now - sentAt));
    if (this.rates.length > most) this.rates.shift();
  }

  /**
   * The most pages worth holding in flight: PACE_GAIN times the pages taken in the fastest round trip, at the mean
   * rate of the latest window of pages (a round trip's worth, so that a page or two that came back in a burst do not
   * decide). No bound before a window of pages has been measured.
   */
  private get paceLimit(): number {
    if (this.rates.length < this.size || !Number.isFinite(this.fastest)) return Number.POSITIVE_INFINITY;
    const latest = this.rates.slice(-this.size);
    const rate = latest.reduce((a, b) => a + b, 0) / latest.length;
    return Math.ceil(PACE_GAIN * rate * this.fastest);
  }

  /** One more page in flight, unless the byte cap or the pace holds the window where it is. */
  private grow(reason: string): void {
    if (this.size >= this.byteLimit) return this.noteCap(this.allowed);
    if (this.size >= this.paceLimit) return this.notePace();
    this.size++;
    this.tell(this.size - 1, this.size, reason);
  }

  /** Says, once, that the byte cap holds the window at `allowed` (down from `before`, or where it is). */
  private noteCap(before: number): void {
    if (this.capped) return;
    this.capped = true;
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
    this.tell(before, this.allowed, `pages of ${mb(this.pageBytes)}, at most ${mb(this.maxBytes)} of them waiting`);
  }

  /** Says, once, that more pages in flight would only wait. */
  private notePace(): void {
    if (this.paced) return;
    this.paced = true;
    this.tell(this.size, this.size, 'pages come back no sooner with more in flight');
  }

  private tell(from: number, to: number, reason: string): void {
    this.options.onChange?.({ from, to, reason });
  }
}

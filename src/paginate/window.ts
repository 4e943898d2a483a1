/**
 * How many pages a walk by pageIndex may hold in flight (docs/cli.md, "Concurrency"): AIMD as TCP's window, steered
 * by latency as Vegas and Netflix's gradient limit, bounded by BBR's in-flight estimate. Pure: the walk tells times.
 */

/** The most pages `--concurrency auto` keeps in flight. */
export const WINDOW_CEILING = 32;
/** A page "keeps up" within twice the fastest page's time plus jitter: slower, requests queue and more would wait. */
const KEEPS_UP = (fastest: number, ms: number): boolean => ms <= 2 * fastest + 10;
/** A page "slowed" past about twice the time that keeps up: the band between is left to jitter. */
const SLOWEST = (fastest: number): number => 4 * fastest + 20;
/** How many times the pages taken in the fastest round trip the window may hold: headroom to measure a higher rate. */
const PACE_GAIN = 2;
/**
 * After a 429 or 503, the load that drew it is tried again only after this many times the wait it asked for: a
 * refused probe costs that whole wait, so probing no more often keeps the cost to a tenth of the walk.
 */
const PROBE_AFTER_WAITS = 10;

/** A page the walk took: when it was sent, how long it took, whether it was retried, and how many were in flight. */
export interface TakenPage {
  sentAt: number;
  ms: number;
  /** How long its first byte took: the server's latency without the transfer, so larger pages are not "slower". */
  firstByteMs: number;
  retried: boolean;
  /** The pages in flight when it was sent, itself included. */
  load: number;
}

export interface WindowChange {
  from: number;
  to: number;
  reason: string;
}

export interface WindowOptions {
  start: number;
  /** `--concurrency auto`: grow and shrink; otherwise the window stays `start`. */
  adaptive: boolean;
  ceiling?: number;
  onChange?: (change: WindowChange) => void;
}

export class Window {
  private size: number;
  private readonly ceiling: number;
  /** The fastest page so far (ms), requests that were retried aside. */
  private fastest = Number.POSITIVE_INFINITY;
  /** The fastest first byte so far (ms), likewise. */
  private fastestFirstByte = Number.POSITIVE_INFINITY;
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
  /** The size the window was last told to be held at (by the pace or a slowed page), to tell each hold once. */
  private held = 0;
  /** The most pages in flight from now on: below the number at which a page slowed. */
  private limit: number;
  /** The pages in flight when the latest refused request was sent, and when that many may be tried again. */
  private refusedLoad = Number.POSITIVE_INFINITY;
  private refusedWith = '';
  private probeAt = 0;

  constructor(private readonly options: WindowOptions) {
    this.size = Math.max(1, options.start);
    this.ceiling = options.ceiling ?? WINDOW_CEILING;
    this.limit = this.ceiling;
  }

  /** The pages that may be in flight now. */
  get allowed(): number {
    return this.size;
  }

  /** How long a new request should wait before it is sent (a Retry-After still running), in ms. */
  delay(now: number): number {
    return Math.max(0, this.resumeAt - now);
  }

  /**
   * The walk took the next page at `now`. The window grows, and shrinks, only on pages the walk waited for: when it
   * writes more slowly than they come (a slow reader, a busy CPU), more in flight would only hold memory.
   */
  taken(page: TakenPage, waited: boolean, now: number): void {
    const { sentAt, ms, retried } = page;
    if (waited) this.lastWait = this.takenCount;
    this.takenCount++;
    this.measureRate(sentAt, now);
    // A retried page's time is mostly the wait the server asked for.
    if (retried) return;
    this.fastest = Math.min(this.fastest, ms);
    this.fastestFirstByte = Math.min(this.fastestFirstByte, page.firstByteMs);
    if (!this.options.adaptive) return;
    const slowed = page.firstByteMs > SLOWEST(this.fastestFirstByte);
    if (waited && page.load > 1 && sentAt >= this.lastCut && slowed) return this.slowed(page, now);
    const waiting = this.takenCount - this.lastWait <= this.size;
    if (!KEEPS_UP(this.fastest, ms) || !waiting || this.size >= this.ceiling) return;
    if (this.lastCut === Number.NEGATIVE_INFINITY) {
      // Half a page per good page: half again per round trip. Doubling (TCP's slow start) overshoots a server's limit
      // by as many requests as the limit itself, and each of them is a 429 and a retry that collide once more.
      this.credit++;
      if (this.credit < 2) return;
      this.credit = 0;
      return this.grow('pages come back as fast as the first ones', now);
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
    this.grow('no 429, 503 or slowed page since the last cut, and pages come back as fast as the first ones', now);
  }

  /** A page sent with `load` in flight slowed: the window comes down by the gradient (at most halved), below `load`. */
  private slowed({ firstByteMs: ms, load }: TakenPage, now: number): void {
    const from = this.size;
    const fastest = this.fastestFirstByte;
    this.limit = Math.max(1, Math.min(this.limit, load - 1));
    const gradient = Math.max(0.5, SLOWEST(fastest) / ms);
    this.size = Math.max(1, Math.min(this.limit, Math.ceil(from * gradient)));
    this.cut(now);
    const why = `a page sent with ${load} in flight began to come back after ${Math.round(ms)} ms, the fastest after ${Math.round(fastest)} ms`;
    this.tell(from, this.size, `${why}; at most ${this.limit} from now on`);
  }

  /** The window was cut at `now`: growth waits for a quiet stretch of pages sent after it. */
  private cut(now: number): void {
    this.lastCut = now;
    this.quiet = this.size;
    this.credit = 0;
    this.held = 0;
  }

  /**
   * The server asked for less (a 429 or 503, `reason` e.g. "HTTP 429") to a request sent at `sentAt`, which is
   * retried after `delayMs`, with `load` in flight when it was sent. Halves the window once per round: requests sent
   * before the last cut do not cut again.
   */
  throttled(sentAt: number, now: number, reason: string, delayMs: number, load: number): void {
    if (!this.options.adaptive) return;
    this.resumeAt = Math.max(this.resumeAt, now + delayMs);
    // The least load refused while the last hold runs; with no Retry-After the wait is a page's round trip.
    if (now >= this.probeAt || load <= this.refusedLoad) [this.refusedLoad, this.refusedWith] = [load, reason];
    const waited = Math.max(delayMs, Number.isFinite(this.fastest) ? this.fastest : 0);
    this.probeAt = Math.max(this.probeAt, now + PROBE_AFTER_WAITS * waited);
    if (sentAt < this.lastCut) return;
    const from = this.size;
    this.size = Math.max(1, Math.floor(from / 2));
    this.cut(now);
    const wait = delayMs > 0 ? `; no new request for ${(delayMs / 1000).toFixed(1)} s` : '';
    if (this.size !== from) this.tell(from, this.size, `the server answered ${reason}${wait}`);
  }

  /** The pages taken while this one was in flight, per ms of its round trip: what server, link and process deliver. */
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
   * The most pages worth holding in flight: PACE_GAIN times the pages taken in the fastest round trip, at the mean rate
   * of the latest window of pages (so a burst does not decide). No bound before a window of pages has been measured.
   */
  private get paceLimit(): number {
    if (this.rates.length < this.size || !Number.isFinite(this.fastest)) return Number.POSITIVE_INFINITY;
    const latest = this.rates.slice(-this.size);
    const rate = latest.reduce((a, b) => a + b, 0) / latest.length;
    return Math.ceil(PACE_GAIN * rate * this.fastest);
  }

  /** One more page in flight, unless the pace, a page that slowed or a recent 429 holds the window where it is. */
  private grow(reason: string, now: number): void {
    if (this.size >= this.paceLimit) return this.noteHeld('pages come back no sooner with more in flight');
    if (this.size >= this.limit) return this.noteHeld(`a page slowed with ${this.limit + 1} in flight`);
    if (this.size + 1 >= this.refusedLoad && now < this.probeAt) {
      const wait = Math.ceil((this.probeAt - now) / 1000);
      return this.noteHeld(`${this.refusedWith} came with ${this.refusedLoad} in flight; more is tried in ${wait} s`);
    }
    this.size++;
    this.held = 0;
    this.tell(this.size - 1, this.size, reason);
  }

  /** Says, once for each size it is held at, why the window does not grow now. */
  private noteHeld(reason: string): void {
    if (this.held === this.size) return;
    this.held = this.size;
    this.tell(this.size, this.size, reason);
  }

  private tell(from: number, to: number, reason: string): void {
    this.options.onChange?.({ from, to, reason });
  }
}

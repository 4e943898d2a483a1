import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RetryInfo } from '../http/client.js';
import { interrupted } from '../errors.js';
import { buildNdjsonInPlace } from './ndjson.js';
import type { PageWriter } from '../output/page-writer.js';
import { contractError, type Page } from './envelope.js';
import { createSpanTable } from './json-scan.js';
import { createBufferPool } from './buffer-pool.js';
import { ByteBudget, WINDOW_BYTES } from './byte-budget.js';
import { type FetchContext, fetchRaw, parseRaw, type RawPage, refusedWith } from './fetch-page.js';
import { indexUrl, LinkBook, linksTo, type NextLink } from './link-book.js';
import { refusesPageSize } from './page-size.js';
import { peekLinks } from './peek-links.js';
import { type TakenPage, Window, WINDOW_CEILING, type WindowChange } from './window.js';

export interface WalkOptions {
  firstUrl: string;
  /** Asked for once instead when the first request gets a 400 (idcli's own page size refused). */
  fallbackUrl?: string;
  apiOrigin: string;
  limit?: number;
  concurrency?: number;
  /**
   * `--concurrency auto`: the window starts at `concurrency` and adapts to the server (see Window); otherwise it
   * stays `concurrency`.
   */
  adaptive?: boolean;
}

export interface WalkContext {
  fetch: FetchContext;
  writer: PageWriter;
  /** Aborted on SIGINT. */
  interrupt: AbortSignal;
  /** Aborted when stdout's reader has gone; the walk then ends quietly. */
  readerGone: AbortSignal;
  /** After each page is written; `rest` (when there is more) is the URL that fetches exactly what follows it. */
  onPage?: (pages: number, items: number, page: Page, rest: string | undefined) => void;
  /** The first request got a 400 and the walk asks again with fallbackUrl. */
  onFallback?: () => void;
  /** Why --concurrency could not be used for this collection. */
  onSequentialFallback?: (reason: string) => void;
  /** The window changed (under `adaptive`, or held by the byte cap), and why. */
  onWindow?: (change: WindowChange) => void;
}

export interface WalkResult {
  pages: number;
  items: number;
  /** stdout was closed by its reader before the walk finished (not an error). */
  readerGone: boolean;
}

/**
 * The walk stopped early: `cause` is the error; stdout holds `written` items from `pages` whole pages;
 * `resumeUrl` (when there is one) fetches exactly the rest.
 */
export class WalkFailure extends Error {
  readonly written: number;
  readonly pages: number;
  readonly resumeUrl: string | undefined;
  constructor(cause: unknown, progress: { items: number; pages: number }, resumeUrl: string | undefined) {
    super('walk stopped', { cause });
    this.name = 'WalkFailure';
    this.written = progress.items;
    this.pages = progress.pages;
    this.resumeUrl = resumeUrl;
  }
}

class ReaderGone extends Error {}

interface Pending<T> {
  url: string;
  index?: number;
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

/** A validated page, what follows it, and the request for that already under way. */
interface Step {
  page: Page;
  next: NextLink;
  pending?: Pending<RawPage>;
}

/**
 * Streams a collection to the writer page by page, following links.next, while the next page is already
 * being fetched. With `concurrency` > 1 and an offset collection of known size, the remaining pages are
 * fetched by pageIndex (service contract: "Offset-based pages are reached by incrementing pageIndex"),
 * at most `concurrency` at a time, and written strictly in order. A page is written whole or not at all,
 * so on failure stdout holds exactly the pages before the failing one.
 */
export async function walk(options: WalkOptions, ctx: WalkContext): Promise<WalkResult> {
  const w = new Walk(options, ctx);
  try {
    await w.run();
    return { pages: w.pages, items: w.items, readerGone: false };
  } catch (err) {
    if (err instanceof ReaderGone || ctx.readerGone.aborted)
      return { pages: w.pages, items: w.items, readerGone: true };
    throw err;
  } finally {
    w.finished.abort();
  }
}

/** The state of one walk and its steps. */
class Walk {
  pages = 0;
  items = 0;
  /**
   * Aborted when the walk ends however it ends: a prefetch or window fetch nobody will write is cancelled
   * (one signal for the whole walk; a controller per page costs more than the page's bookkeeping).
   */
  readonly finished = new AbortController();
  private readonly signal: AbortSignal;
  private readonly limit: number;
  private readonly concurrency: number;
  /** Pages the walk by pageIndex may hold in flight. */
  private readonly window: Window;
  private readonly links: LinkBook;
  /** Every page is parsed only when it is next to be written, so one span table serves the whole walk. */
  private readonly spans = createSpanTable();
  /** The bytes of the pages in flight, waiting and being written. */
  private readonly budget: ByteBudget;
  /** Page bodies are recycled once written: in flight are at most a window of pages plus one prefetch. */
  private readonly bodies: ReturnType<typeof createBufferPool>;
  private readonly fetchCtx: FetchContext;
  /** The first request, which pages fetched by pageIndex are built from: the fallback once that was asked. */
  private firstUrl: string;
  /** Page requests sent and not yet answered. */
  private inFlight = 0;

  constructor(
    private readonly options: WalkOptions,
    private readonly ctx: WalkContext,
  ) {
    this.limit = options.limit ?? Number.POSITIVE_INFINITY;
    this.firstUrl = options.firstUrl;
    this.links = new LinkBook(options.apiOrigin);
    this.concurrency = Math.max(1, options.concurrency ?? 1);
    const adaptive = options.adaptive === true && this.concurrency > 1;
    this.window = new Window({ start: this.concurrency, adaptive, onChange: ctx.onWindow });
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
    const most = adaptive ? Math.max(WINDOW_CEILING, this.concurrency) : this.concurrency;
    this.signal = AbortSignal.any([ctx.interrupt, ctx.readerGone, this.finished.signal]);
    // Each request in flight (up to a window plus the prefetch) and each wait between its retries listens on it:
    // above Node's default of ten listeners that is the walk's design, not a leak worth a warning on stderr.
    setMaxListeners(2 * (most + 1) + 10, this.signal);
    // Free page buffers and the pages held share the byte cap: a buffer kept for reuse is memory as much as a page.
    this.bodies = createBufferPool(most + 2, () => WINDOW_BYTES - this.budget.bytes);
    this.fetchCtx = { client: ctx.fetch.client, bodyBuffer: (size) => this.bodies.take(size) };
  }

  /** The first page, then the rest in parallel when the collection allows it, else one by one. */
  async run(): Promise<void> {
    const raw = await this.fetchFirst();
    if (this.concurrency === 1) return this.sequentialFrom(await this.advance(raw));
    const first = this.parse(raw);
    if (first.next !== undefined && first.itemCount > 0 && this.wantsMoreAfter(first)) {
      const plan = this.parallelPlan(first);
      if (typeof plan === 'string') this.ctx.onSequentialFallback?.(plan);
      else if (plan.lastIndex > (first.pageIndex as number)) return this.parallelFrom(first, plan);
    }
    return this.sequentialFrom(this.stepFrom(first, this.firstUrl));
  }

  /** The first page's body; asked for once more with the fallback URL when the server refuses the first's size. */
  private async fetchFirst(): Promise<RawPage> {
    let raw: RawPage;
    try {
      raw = await this.settle(this.start(this.firstUrl));
    } catch (err) {
      const fallback = this.options.fallbackUrl;
      // An interrupted walk asks nothing more, whatever its first answer was.
      const refused =
        !this.ctx.interrupt.aborted && err instanceof WalkFailure && refusesPageSize(refusedWith(err.cause));
      if (fallback === undefined || !refused) throw err;
      this.ctx.onFallback?.();
      this.firstUrl = fallback;
      raw = await this.settle(this.start(fallback));
    }
    this.links.enterFirst(this.firstUrl);
    return raw;
  }

  /**
   * Starts fetching a page, not before the retry of the last page the server refused (its Retry-After at least);
   * tells the window how long it took and whether the server asked for less on the way (a 429 or 503, retried).
   */
  private start(url: string, index?: number): Pending<RawPage> {
    const wait = this.window.delay(performance.now());
    const timing: Timing = { sentAt: 0, ms: 0, firstByteMs: -1, retried: false, load: 0, arrived: false };
    const seq = this.budget.start();
    const promise = (wait > 0 ? sleep(wait, undefined, { signal: this.signal }) : Promise.resolve()).then(() =>
      this.timed(url, timing, seq),
    );
    // Rejections are consumed where the page is awaited; this only keeps an abandoned prefetch quiet.
    promise.catch(() => {});
    return index === undefined ? { url, seq, promise, timing } : { url, index, seq, promise, timing };
  }

  /** One page's request, timed for the window. */
  private async timed(url: string, timing: Timing, seq: number): Promise<RawPage> {
    const sentAt = (timing.sentAt = performance.now());
    timing.load = ++this.inFlight;
    const onRetry = ({ status, reason, delayMs }: RetryInfo): void => {
      timing.retried = true;
      if (status === 429 || status === 503) this.window.throttled(sentAt, performance.now(), reason, delayMs);
    };
    try {
      const onBodyBytes = (bytes: number, resume: () => void): boolean => {
        // The latest attempt's first byte: a retried page's time does not count anyway.
        if (timing.firstByteMs < 0) timing.firstByteMs = performance.now() - sentAt;
        return this.budget.hold(seq, bytes, resume);
      };
      const raw = await fetchRaw({ ...this.fetchCtx, onRetry, onBodyBytes }, url, this.signal);
      timing.ms = performance.now() - sentAt;
      // An empty body has no first byte before its end.
      if (timing.firstByteMs < 0) timing.firstByteMs = timing.ms;
      timing.arrived = true;
      return raw;
    } finally {
      this.inFlight--;
    }
  }

  /** A page of the window awaited, and told to the window: whether the walk had to wait for it, and how it came. */
  private async awaitWindow(p: Pending<RawPage>): Promise<RawPage> {
    const waited = !p.timing.arrived;
    const raw = await this.settle(p);
    this.window.taken(p.timing, waited, performance.now());
    return raw;
  }

  /** The walk stops with `err`; `resumeUrl` fetches exactly what is not written yet. */
  private stopped(err: unknown, resumeUrl: string | undefined): WalkFailure {
    return new WalkFailure(err, { items: this.items, pages: this.pages }, resumeUrl);
  }

  /** A page's fetch awaited; its failure stops the walk with a resume from that page. */
  private async settle<T>(p: Pending<T>): Promise<T> {
    try {
      return await p.promise;
    } catch (err) {
      this.budget.release(p.seq);
      throw this.failure(err, p.url);
    }
  }

  /** Why the walk stops: the reader gone, when it cancelled the request, else `err`. */
  private failure(err: unknown, resumeUrl: string | undefined): Error {
    if (this.ctx.readerGone.aborted) return new ReaderGone();
    return this.stopped(err, resumeUrl);
  }

  /** A fetched page validated, or the walk stopped with a resume from it. */
  private parse(raw: RawPage): Page {
    try {
      return parseRaw(raw, this.spans);
    } catch (err) {
      throw this.stopped(err, raw.url);
    }
  }

  /** Whether items after this page are still wanted under --limit. */
  private wantsMoreAfter(page: Page): boolean {
    return this.items + page.itemCount < this.limit;
  }

  /** Writes the page (or its first items under --limit); stops the walk when the reader has gone. */
  private async emit(page: Page, nextUrl: string | undefined): Promise<void> {
    const take = Math.min(page.itemCount, this.limit - this.items);
    const out = take > 0 ? buildNdjsonInPlace(page.body, page.items, take) : page.body.subarray(0, 0);
    let written: boolean;
    try {
      // Pages are written in the order they were asked for (those dropped unwritten are released as they are).
      written = await this.ctx.writer.write(out, () => {
        this.budget.releaseOldest();
        this.bodies.give(page.body);
      });
    } catch (err) {
      // The output failed (a full disk): this page is not in it, so the resume starts with it.
      throw this.stopped(err, page.url);
    }
    if (!written) throw new ReaderGone();
    this.items += take;
    this.pages++;
    this.ctx.onPage?.(this.pages, this.items, page, nextUrl);
    // SIGINT is honoured between pages, never inside one: no partial line reaches stdout.
    if (this.ctx.interrupt.aborted) throw this.failure(interrupted(), nextUrl);
  }

  /**
   * Validates a fetched page and starts fetching the one after it. When its links can be read from the
   * end of the body (peekLinks), the next request goes out BEFORE this page is scanned, so the server
   * prepares page k+1 while page k is validated and written; otherwise it goes out right after the scan.
   * Under --limit the item count decides whether a next page is wanted, so the scan comes first.
   */
  private async advance(raw: RawPage): Promise<Step> {
    const early = Number.isFinite(this.limit) ? undefined : peekLinks(raw.body);
    if (!early) return this.stepFrom(this.parse(raw), raw.url);
    const next = this.links.follow(early, raw.url);
    const pending = next.url === undefined ? undefined : this.start(next.url);
    // node:http sends from a process.nextTick callback: let it run before the scan, so the server
    // prepares the next page while this one is validated.
    if (pending) await new Promise((resolve) => process.nextTick(resolve));
    const page = this.parse(raw);
    // Unreachable for valid JSON (both read the same bytes); a guard against a head start gone wrong.
    if (page.next !== early.next) throw this.stopped(contractError(raw.url, 'inconsistent links'), raw.url);
    return pending ? { page, next, pending } : { page, next };
  }

  /** A page already validated as a step of the walk: its next link resolved, and fetched when wanted. */
  private stepFrom(page: Page, url: string): Step {
    const next = this.wantsMoreAfter(page) ? this.links.follow(page, url) : {};
    return next.url !== undefined ? { page, next, pending: this.start(next.url) } : { page, next };
  }

  /** Writes the step's page and follows links from it, always one request ahead. */
  private async sequentialFrom(first: Step): Promise<void> {
    let step = first;
    for (;;) {
      await this.emit(step.page, step.next.url);
      // The page is valid and written; only its link is unusable, so there is nothing to resume from.
      if (step.next.error !== undefined) throw this.stopped(step.next.error, undefined);
      if (!step.pending) return;
      step = await this.advance(await this.settle(step.pending));
    }
  }

  /** The pageIndex range a parallel walk fetches, or why the collection must be walked by its links. */
  private parallelPlan(first: Page): ParallelPlan | string {
    if (first.pageIndex === undefined) return 'the collection is cursor-based';
    if (first.totalItems === undefined) return 'the collection does not report totalItems';
    const total = Number(first.totalItems);
    if (!Number.isSafeInteger(total)) return 'totalItems is too large';
    const pageSize = first.itemCount;
    // The window asks for the pages the links would lead to, and only while they do (see parallelFrom).
    if (!linksTo(first.next, first.url, indexUrl(this.firstUrl, first.pageIndex + 1, pageSize)))
      return `links.next does not lead to the next pageIndex at the ${pageSize} items a page holds`;
    let lastIndex = first.pageIndex + Math.ceil(Math.max(0, total - (first.pageIndex + 1) * pageSize) / pageSize);
    if (Number.isFinite(this.limit))
      lastIndex = Math.min(lastIndex, first.pageIndex + Math.ceil(this.limit / pageSize) - 1);
    return { pageSize, lastIndex };
  }

  /**
   * Fetches pages by pageIndex, up to the window at a time, and writes them in order. Raw bodies wait in the window
   * and are parsed only when their turn to be written comes: a waiting page costs just its (recycled) bytes.
   */
  private async parallelFrom(first: Page, { pageSize, lastIndex }: ParallelPlan): Promise<void> {
    const queue: Pending<RawPage>[] = [];
    let nextIndex = (first.pageIndex as number) + 1;
    const urlOf = (index: number): string => indexUrl(this.firstUrl, index, pageSize);
    /** Requests up to the window, while a page as large as the largest so far fits in the byte budget. */
    const fill = (): void => {
      // Once the reader has gone or the walk is interrupted, no new request starts.
      const wanted = () => nextIndex <= lastIndex && queue.length < this.window.allowed && !this.signal.aborted;
      while (wanted() && this.budget.roomForOne) {
        queue.push(this.start(urlOf(nextIndex), nextIndex++));
      }
    };
    try {
      // The first page's link is checked like every other's: against the pages written before it.
      let linked = this.links.written(first, first.url, first.url, this.wantsMoreAfter(first));
      if (linked.error === undefined) fill();
      // An interrupt may leave the window empty while pages remain: the rest still starts at the next index.
      await this.emit(first, linked.error === undefined ? (queue[0]?.url ?? urlOf(nextIndex)) : undefined);
      if (linked.error !== undefined) throw this.stopped(linked.error, undefined);
      for (let p = queue.shift(); p; p = queue.shift()) {
        const page = this.parse(await this.awaitWindow(p));
        const more = page.next !== undefined && this.wantsMoreAfter(page);
        // The page was asked for where the links led, so it is the page the walk by links writes. Where its own link
        // leads elsewhere than the next page planned (a collection that grew past the plan, a server that serves
        // more or fewer items than asked, or numbers its pages otherwise), the walk goes on by its links, checked
        // against every page written so far: the same pages, whatever the window.
        if (
          more &&
          (p.index === lastIndex || !linksTo(page.next, linked.url ?? p.url, urlOf((p.index as number) + 1)))
        ) {
          this.drop(queue);
          return await this.sequentialFrom(this.stepFrom(page, this.links.handOver(p.url, linked.url)));
        }
        // Pages come by pageIndex here, yet a link to another origin or back to a page already written breaks the
        // contract all the same, and says so as the sequential walk would: after this page, with nothing to resume
        // from. The pages in flight after it are dropped unwritten.
        linked = this.links.written(page, p.url, linked.url, this.wantsMoreAfter(page));
        const linkError = linked.error;
        if (more && linkError === undefined) fill();
        else this.drop(queue); // a shrunken collection or the limit: nothing after this page is wanted
        // An interrupt may leave the window empty while pages remain: the rest still starts at the next index.
        await this.emit(page, queue[0]?.url ?? (more && linkError === undefined ? urlOf(nextIndex) : undefined));
        if (linkError !== undefined) throw this.stopped(linkError, undefined);
        if (!more) return;
      }
    } finally {
      // Pages dropped here are cancelled when the walk ends (see `finished`).
      this.drop(queue);
    }
  }

  /** Pages in flight nobody will write: their bytes leave the budget now, their requests end with the walk. */
  private drop(queue: Pending<RawPage>[]): void {
    for (const p of queue) this.budget.release(p.seq);
    queue.length = 0;
  }
}

interface ParallelPlan {
  pageSize: number;
  lastIndex: number;
}

import { setMaxListeners } from 'node:events';
import { interrupted } from '../errors.js';
import { buildNdjsonInPlace } from './ndjson.js';
import type { PageWriter } from '../output/page-writer.js';
import { contractError, type Page } from './envelope.js';
import { createSpanTable } from './json-scan.js';
import { createBufferPool } from './buffer-pool.js';
import { type FetchContext, fetchRaw, parseRaw, type RawPage } from './fetch-page.js';
import { pageKey, resolveNextLink } from './links.js';
import { peekLinks } from './peek-links.js';
import { setQueryParam } from '../apiclient/target.js';
import { createVisitedPages } from './visited.js';

export interface WalkOptions {
  firstUrl: string;
  apiOrigin: string;
  limit?: number;
  concurrency?: number;
  /**
   * `--concurrency auto`: the first 429 or 503 of the walk (a server asking for less) drops it to one page in
   * flight for the rest of the walk.
   */
  yieldToThrottling?: boolean;
}

export interface WalkContext {
  fetch: FetchContext;
  writer: PageWriter;
  /** Aborted on SIGINT. */
  interrupt: AbortSignal;
  /** Aborted when stdout's reader has gone; the walk then ends quietly. */
  readerGone: AbortSignal;
  onPage?: (pages: number, items: number, page: Page) => void;
  /** Why --concurrency could not be used for this collection. */
  onSequentialFallback?: (reason: string) => void;
  /** The walk dropped to one page in flight (yieldToThrottling), and why. */
  onThrottled?: (reason: string) => void;
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

const NOTHING_VISITED = { has: () => false };

/** Resolves after the callbacks already queued with process.nextTick have run. */
function nextTick(): Promise<void> {
  return new Promise((resolve) => process.nextTick(resolve));
}

interface Pending<T> {
  url: string;
  index?: number;
  promise: Promise<T>;
}

interface NextLink {
  url?: string;
  error?: unknown;
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
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const visited = createVisitedPages();
  let pages = 0;
  let items = 0;
  // Aborted when the walk ends however it ends: a prefetch or window fetch nobody will write is cancelled
  // (one signal for the whole walk; a controller per page costs more than the page's bookkeeping).
  const finished = new AbortController();
  const walkSignal = AbortSignal.any([ctx.interrupt, ctx.readerGone, finished.signal]);
  // Each request in flight (up to `concurrency` plus the prefetch) and each wait between its retries listens on
  // it: above Node's default of ten listeners that is the walk's design, not a leak worth a warning on stderr.
  setMaxListeners(2 * (concurrency + 1) + 10, walkSignal);
  // Every page is parsed only when it is next to be written, so one span table serves the whole walk.
  const spans = createSpanTable();
  // Page bodies are recycled once written: in flight are at most `concurrency` pages plus one prefetch.
  const bodies = createBufferPool(concurrency + 2);
  // Pages the parallel window may hold in flight; lowered to 1 for good when the server throttles (auto).
  let window = concurrency;
  const fetchCtx: FetchContext = {
    ...ctx.fetch,
    bodyBuffer: (size) => bodies.take(size),
    onRetry: (info) => {
      if (options.yieldToThrottling && window > 1 && (info.status === 429 || info.status === 503)) {
        window = 1;
        ctx.onThrottled?.(info.reason);
      }
      ctx.fetch.onRetry?.(info);
    },
  };

  function startRaw(url: string): Pending<RawPage> {
    return track({ url, promise: fetchRaw(fetchCtx, url, walkSignal) });
  }

  function track<T>(p: Pending<T>): Pending<T> {
    // Rejections are consumed where the page is awaited; this only keeps an abandoned prefetch quiet.
    p.promise.catch(() => {});
    return p;
  }

  async function settle<T>(p: Pending<T>): Promise<T> {
    try {
      return await p.promise;
    } catch (err) {
      throw stopReason(err, p.url);
    }
  }

  function stopReason(err: unknown, resumeUrl: string | undefined): Error {
    if (ctx.readerGone.aborted) return new ReaderGone();
    if (ctx.interrupt.aborted) return new WalkFailure(interrupted(), { items, pages }, resumeUrl);
    return new WalkFailure(err, { items, pages }, resumeUrl);
  }

  const wantsMoreAfter = (page: Page): boolean => items + page.itemCount < limit;

  /** Writes the page (or its first items under --limit); false when the reader has gone. */
  async function emit(page: Page, nextUrl: string | undefined): Promise<boolean> {
    const take = Math.min(page.itemCount, limit - items);
    const out = take > 0 ? buildNdjsonInPlace(page.body, page.items, take) : page.body.subarray(0, 0);
    let written: boolean;
    try {
      written = await ctx.writer.write(out, () => bodies.give(page.body));
    } catch (err) {
      // The output failed (a full disk): this page is not in it, so the resume starts with it.
      throw new WalkFailure(err, { items, pages }, page.url);
    }
    if (!written) return false;
    items += take;
    pages++;
    ctx.onPage?.(pages, items, page);
    // SIGINT is honoured between pages, never inside one: no partial line reaches stdout.
    if (ctx.interrupt.aborted) throw stopReason(undefined, nextUrl);
    return true;
  }

  /** links.next resolved and checked, or the error to raise once the page is written. */
  function resolveNext(next: string | undefined, self: string | undefined, url: string): NextLink {
    rememberSelf(self, url);
    if (next === undefined) return {};
    try {
      const resolved = resolveNextLink(next, url, options.apiOrigin, visited);
      visited.add(resolved);
      return { url: resolved };
    } catch (error) {
      return { error };
    }
  }

  /**
   * The page's own canonical URL counts as visited too: the first request is often spelled differently
   * from the links (`/v1/users` vs `?pageIndex=0&pageSize=100`), and a loop back to it must still be seen.
   */
  function rememberSelf(self: string | undefined, url: string): void {
    // Usually self is the very URL just fetched, already remembered: no URL parse per page then.
    if (self === undefined || visited.has(self)) return;
    try {
      const u = new URL(self, url);
      if (self.includes('#')) u.hash = '';
      if (u.origin === options.apiOrigin) visited.add(u.href);
    } catch {
      // An unparseable self link is not needed for the walk.
    }
  }

  /**
   * Validates a fetched page and starts fetching the one after it. When its links can be read from the
   * end of the body (peekLinks), the next request goes out BEFORE this page is scanned, so the server
   * prepares page k+1 while page k is validated and written; otherwise it goes out right after the scan.
   * Under --limit the item count decides whether a next page is wanted, so the scan comes first.
   */
  async function advance(raw: RawPage): Promise<Step> {
    const early = Number.isFinite(limit) ? undefined : peekLinks(raw.body);
    let next: NextLink = {};
    let pending: Pending<RawPage> | undefined;
    if (early) {
      next = resolveNext(early.next, early.self, raw.url);
      if (next.url !== undefined) {
        pending = startRaw(next.url);
        // node:http sends from a process.nextTick callback: let it run before the scan, so the server
        // prepares the next page while this one is validated.
        await nextTick();
      }
    }
    let page: Page;
    try {
      page = parseRaw(raw, spans);
    } catch (err) {
      throw new WalkFailure(err, { items, pages }, raw.url);
    }
    if (early) {
      // Unreachable for valid JSON (both read the same bytes); a guard against a head start gone wrong.
      if (page.next !== early.next)
        throw new WalkFailure(contractError(raw.url, 'inconsistent links'), { items, pages }, raw.url);
    } else {
      next = wantsMoreAfter(page) ? resolveNext(page.next, page.self, raw.url) : {};
      if (next.url !== undefined) pending = startRaw(next.url);
    }
    return pending ? { page, next, pending } : { page, next };
  }

  /** A page already validated (the first one, or the last of a parallel run) as a step of the walk. */
  function stepFrom(page: Page, url: string): Step {
    const next = wantsMoreAfter(page) ? resolveNext(page.next, page.self, url) : {};
    return next.url !== undefined ? { page, next, pending: startRaw(next.url) } : { page, next };
  }

  /** Writes the step's page and follows links from it, always one request ahead. */
  async function sequentialFrom(first: Step): Promise<void> {
    let step = first;
    for (;;) {
      if (!(await emit(step.page, step.next.url))) throw new ReaderGone();
      // The page is valid and written; only its link is unusable, so there is nothing to resume from.
      if (step.next.error !== undefined) throw new WalkFailure(step.next.error, { items, pages }, undefined);
      if (!step.pending) return;
      step = await advance(await settle(step.pending));
    }
  }

  function parallelPlan(first: Page): { pageSize: number; lastIndex: number } | string {
    if (first.pageIndex === undefined) return 'the collection is cursor-based';
    if (first.totalItems === undefined) return 'the collection does not report totalItems';
    const total = Number(first.totalItems);
    if (!Number.isSafeInteger(total)) return 'totalItems is too large';
    const pageSize = first.itemCount;
    let lastIndex = first.pageIndex + Math.ceil(Math.max(0, total - (first.pageIndex + 1) * pageSize) / pageSize);
    if (Number.isFinite(limit)) lastIndex = Math.min(lastIndex, first.pageIndex + Math.ceil(limit / pageSize) - 1);
    return { pageSize, lastIndex };
  }

  async function parallelFrom(first: Page, firstUrl: string, pageSize: number, lastIndex: number): Promise<void> {
    const firstIndex = first.pageIndex as number;
    // Raw bodies wait in the window and are parsed only when their turn to be written comes: a waiting
    // page costs just its (recycled) bytes, and one span table serves the whole walk.
    const queue: Pending<RawPage>[] = [];
    let nextIndex = firstIndex + 1;
    const urlFor = (index: number): string => {
      // Built from the first request so its filters carry over; pageSize pinned to the size actually served.
      const u = new URL(firstUrl);
      setQueryParam(u, 'pageIndex', String(index));
      setQueryParam(u, 'pageSize', String(pageSize));
      return pageKey(u);
    };
    const fill = (): void => {
      // Once the reader has gone or the walk is interrupted, no new request starts.
      while (nextIndex <= lastIndex && queue.length < window && !walkSignal.aborted) {
        const url = urlFor(nextIndex);
        visited.add(url);
        queue.push(track({ url, index: nextIndex++, promise: fetchRaw(fetchCtx, url, walkSignal) }));
      }
    };
    // Pages dropped here are cancelled when the walk ends (see `finished`).
    const cancelAll = (): void => {
      queue.length = 0;
    };

    try {
      fill();
      if (!(await emit(first, queue[0]?.url))) throw new ReaderGone();
      while (queue.length > 0) {
        const p = queue.shift() as Pending<RawPage>;
        const raw = await settle(p);
        let page: Page;
        try {
          page = parseRaw(raw, spans);
        } catch (err) {
          throw new WalkFailure(err, { items, pages }, p.url);
        }
        if (page.pageIndex !== p.index) {
          throw new WalkFailure(
            contractError(p.url, `asked for pageIndex ${p.index}, got ${page.pageIndex ?? 'none'}`),
            { items, pages },
            p.url,
          );
        }
        // A grown collection: the planned last page links further, so continue by its links.
        if (p.index === lastIndex && page.next !== undefined && wantsMoreAfter(page))
          return await sequentialFrom(stepFrom(page, p.url));
        const more = page.next !== undefined && wantsMoreAfter(page);
        // Pages come by pageIndex here, yet a link to another origin is the server breaking the contract all the
        // same, and says so as the sequential walk would: after this page, with nothing to resume from.
        const linkError = foreignLink(page.next, p.url);
        if (more && !linkError) fill();
        else cancelAll(); // a shrunken collection or the limit: nothing after this page is wanted
        if (!(await emit(page, queue[0]?.url))) throw new ReaderGone();
        if (linkError) throw new WalkFailure(linkError, { items, pages }, undefined);
        if (!more) return;
      }
    } finally {
      cancelAll();
    }
  }

  /** The error a links.next to another origin raises, or undefined; whether it was visited does not matter here. */
  function foreignLink(next: string | undefined, url: string): unknown {
    if (next === undefined) return undefined;
    try {
      resolveNextLink(next, url, options.apiOrigin, NOTHING_VISITED);
      return undefined;
    } catch (error) {
      return error;
    }
  }

  try {
    visited.add(pageKey(options.firstUrl));
    if (concurrency === 1) {
      await sequentialFrom(await advance(await settle(startRaw(options.firstUrl))));
      return { pages, items, readerGone: false };
    }
    const firstRaw = await settle(startRaw(options.firstUrl));
    let first: Page;
    try {
      first = parseRaw(firstRaw, spans);
    } catch (err) {
      throw new WalkFailure(err, { items, pages }, firstRaw.url);
    }
    if (first.next !== undefined && first.itemCount > 0 && wantsMoreAfter(first)) {
      const plan = parallelPlan(first);
      if (typeof plan === 'string') ctx.onSequentialFallback?.(plan);
      else if (plan.lastIndex > (first.pageIndex as number)) {
        await parallelFrom(first, options.firstUrl, plan.pageSize, plan.lastIndex);
        return { pages, items, readerGone: false };
      }
    }
    await sequentialFrom(stepFrom(first, options.firstUrl));
    return { pages, items, readerGone: false };
  } catch (err) {
    if (err instanceof ReaderGone || ctx.readerGone.aborted) return { pages, items, readerGone: true };
    throw err;
  } finally {
    finished.abort();
  }
}

import type { PageWriter } from '../output/page-writer.js';
import type { Page } from './envelope.js';
import { type FetchContext, type RawPage, refusedWith } from './fetch-page.js';
import { refusesPageSize } from './page-size.js';
import { parallelFrom, parallelPlan } from './parallel.js';
import { advance, sequentialFrom, stepFrom } from './sequential.js';
import { ReaderGone, WalkFailure, WalkState } from './walk-state.js';
import type { WindowChange } from './window.js';

export { WalkFailure } from './walk-state.js';

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
 * Streams a collection to the writer page by page, following links.next, while the next page is already
 * being fetched. With `concurrency` > 1 and an offset collection of known size, the remaining pages are
 * fetched by pageIndex (service contract: "Offset-based pages are reached by incrementing pageIndex"),
 * at most `concurrency` at a time, and written strictly in order. A page is written whole or not at all,
 * so on failure stdout holds exactly the pages before the failing one.
 */
export async function walk(options: WalkOptions, ctx: WalkContext): Promise<WalkResult> {
  const w = new WalkState(options, ctx);
  try {
    await run(w);
    return { pages: w.pages, items: w.items, readerGone: false };
  } catch (err) {
    if (err instanceof ReaderGone || ctx.readerGone.aborted)
      return { pages: w.pages, items: w.items, readerGone: true };
    throw err;
  } finally {
    w.fetcher.finished.abort();
  }
}

/** The first page, then the rest in parallel when the collection allows it, else one by one. */
async function run(w: WalkState): Promise<void> {
  const raw = await fetchFirst(w);
  if (w.concurrency === 1) return sequentialFrom(w, await advance(w, raw));
  const first = w.parse(raw);
  if (first.next !== undefined && first.itemCount > 0 && w.wantsMoreAfter(first)) {
    const plan = parallelPlan(w, first);
    if (typeof plan === 'string') w.ctx.onSequentialFallback?.(plan);
    else if (plan.lastIndex > (first.pageIndex as number)) return parallelFrom(w, first, plan);
  }
  return sequentialFrom(w, stepFrom(w, first, w.firstUrl));
}

/** The first page's body; asked for once more with the fallback URL when the server refuses the first's size. */
async function fetchFirst(w: WalkState): Promise<RawPage> {
  let raw: RawPage;
  try {
    raw = await w.settle(w.fetcher.start(w.firstUrl));
  } catch (err) {
    const fallback = w.options.fallbackUrl;
    // An interrupted walk asks nothing more, whatever its first answer was.
    const refused = !w.ctx.interrupt.aborted && err instanceof WalkFailure && refusesPageSize(refusedWith(err.cause));
    if (fallback === undefined || !refused) throw err;
    w.ctx.onFallback?.();
    w.firstUrl = fallback;
    raw = await w.settle(w.fetcher.start(fallback));
  }
  w.links.enterFirst(w.firstUrl);
  return raw;
}

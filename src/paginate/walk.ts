import { type RawPage, refusedWith } from './fetch-page.js';
import { refusesPageSize } from './page-size.js';
import { parallelFrom, parallelPlan } from './parallel.js';
import { advance, sequentialFrom, stepFrom } from './sequential.js';
import { ReaderGone, type WalkContext, WalkFailure, type WalkOptions, WalkState } from './walk-state.js';

export { type WalkContext, WalkFailure, type WalkOptions } from './walk-state.js';

export interface WalkResult {
  pages: number;
  items: number;
  /** stdout was closed by its reader before the walk finished (not an error). */
  readerGone: boolean;
}

/**
 * Streams a collection to the writer page by page: by links, one request ahead, or by pageIndex up to the window at
 * once (an offset collection of known size), in order. A page is written whole or not at all.
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
    else if (plan.lastIndex > plan.firstIndex) return parallelFrom(w, first, plan);
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

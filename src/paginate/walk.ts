import { type RawPage, refusedWith } from './get-page.js';
import { firstPageRefused } from './first-request.js';
import { refusesPageSize } from './page-size.js';
import { parallelFrom, parallelPlan } from './parallel.js';
import { advance, sequentialFrom, stepFrom } from './sequential.js';
import type { WalkEvents } from './walk-events.js';
import { ReaderGone, type WalkContext, WalkFailure, type WalkOptions, WalkState } from './walk-state.js';

export { type FirstRequest, firstRequest, resumedAt } from './first-request.js';
export type { WalkEvents, WalkStop } from './walk-events.js';
export { type WalkContext, WalkFailure, type WalkOptions } from './walk-state.js';

export interface WalkResult {
  pages: number;
  items: number;
  /** stdout was closed by its reader before the walk finished (not an error). */
  readerGone: boolean;
}

/**
 * Streams a collection to the writer page by page: by links, one request ahead, or by pageIndex up to the window at
 * once (an offset collection of known size), in order. A page is written whole or not at all. It ends with the
 * result, or a WalkFailure saying why and where to resume; `events` hears of each phase on the way.
 */
export async function walk(options: WalkOptions, ctx: WalkContext, events: WalkEvents = {}): Promise<WalkResult> {
  const w = new WalkState(options, ctx, events);
  const stop = (reason: 'done' | 'reader-gone' | 'failed'): void =>
    events.onStop?.({ reason, pages: w.pages, items: w.items });
  try {
    await run(w);
    stop('done');
    return { pages: w.pages, items: w.items, readerGone: false };
  } catch (err) {
    if (err instanceof ReaderGone || ctx.readerGone.aborted) {
      stop('reader-gone');
      return { pages: w.pages, items: w.items, readerGone: true };
    }
    stop('failed');
    throw err instanceof WalkFailure ? stoppedBeforeFirst(err, options) : err;
  } finally {
    w.scheduler.finished.abort();
  }
}

/** A walk that wrote no page tells a refusal of the page size idcli chose as that (see firstPageRefused). */
function stoppedBeforeFirst(err: WalkFailure, options: WalkOptions): WalkFailure {
  if (err.pages > 0) return err;
  const cause = firstPageRefused(err.cause, options.first);
  return cause === err.cause ? err : new WalkFailure(cause, { items: err.written, pages: err.pages }, err.resumeUrl);
}

/** The first page, then the rest in parallel when the collection allows it, else one by one. */
async function run(w: WalkState): Promise<void> {
  const raw = await fetchFirst(w);
  if (w.concurrency === 1) return sequentialFrom(w, await advance(w, raw));
  const first = w.parse(raw);
  if (first.next !== undefined && first.itemCount > 0 && w.wantsMoreAfter(first)) {
    const plan = parallelPlan(w, first);
    if (typeof plan === 'string') w.events.onSequential?.(plan);
    else if (plan.lastIndex > plan.firstIndex) return parallelFrom(w, first, plan);
  }
  return sequentialFrom(w, stepFrom(w, first, w.firstUrl));
}

/** The first page's body; asked for once more with the fallback URL when the server refuses the first's size. */
async function fetchFirst(w: WalkState): Promise<RawPage> {
  let raw: RawPage;
  try {
    raw = await w.settle(w.scheduler.start(w.firstUrl));
  } catch (err) {
    const { chosen } = w.options.first;
    // An interrupted walk asks nothing more, whatever its first answer was.
    const refused = !w.ctx.interrupt.aborted && err instanceof WalkFailure && refusesPageSize(refusedWith(err.cause));
    if (chosen?.fallback === undefined || !refused) throw err;
    const { size, fallback } = chosen;
    w.events.onFallback?.({ refused: size, retry: fallback.size });
    w.firstUrl = fallback.url;
    raw = await w.settle(w.scheduler.start(fallback.url));
  }
  w.links.enterFirst(w.firstUrl);
  return raw;
}

/**
 * The walk by pageIndex (service contract: "Offset-based pages are reached by incrementing pageIndex"): up to the
 * window of pages in flight, written strictly in order, handing over to the walk by links where the links lead
 * elsewhere than the plan.
 */
import { interrupted } from '../errors.js';
import type { Page } from './envelope.js';
import type { RawPage } from './get-page.js';
import { indexUrl, linksTo } from './link-book.js';
import type { Pending } from './page-scheduler.js';
import { sequentialFrom, stepFrom } from './sequential.js';
import type { WalkState } from './walk-state.js';

export interface ParallelPlan {
  pageSize: number;
  /** The first page's pageIndex, and the last page's the walk asks for. */
  firstIndex: number;
  lastIndex: number;
}

/** The pageIndex range a parallel walk fetches, or why the collection must be walked by its links. */
export function parallelPlan(w: WalkState, first: Page): ParallelPlan | string {
  if (first.pageIndex === undefined) return 'the collection is cursor-based';
  if (first.totalItems === undefined) return 'the collection does not report totalItems';
  const total = Number(first.totalItems);
  if (!Number.isSafeInteger(total)) return 'totalItems is too large';
  const pageSize = first.itemCount;
  // The window asks for the pages the links would lead to, and only while they do (see parallelFrom).
  if (!linksTo(first.next, first.url, indexUrl(w.firstUrl, first.pageIndex + 1, pageSize)))
    return `links.next does not lead to the next pageIndex at the ${pageSize} items a page holds`;
  let lastIndex = first.pageIndex + Math.ceil(Math.max(0, total - (first.pageIndex + 1) * pageSize) / pageSize);
  if (Number.isFinite(w.limit)) lastIndex = Math.min(lastIndex, first.pageIndex + Math.ceil(w.limit / pageSize) - 1);
  return { pageSize, firstIndex: first.pageIndex, lastIndex };
}

/**
 * Fetches pages by pageIndex, up to the window at a time, and writes them in order. Raw bodies wait in the window
 * and are parsed only when their turn to be written comes: a waiting page costs just its (recycled) bytes.
 */
export async function parallelFrom(w: WalkState, first: Page, plan: ParallelPlan): Promise<void> {
  const { scheduler } = w;
  const { pageSize, firstIndex, lastIndex } = plan;
  const queue: Pending<RawPage>[] = [];
  let nextIndex = firstIndex + 1;
  const urlOf = (index: number): string => indexUrl(w.firstUrl, index, pageSize);
  /**
   * Requests up to the window while a page as large as the largest so far fits in the byte budget. An empty window
   * always admits one, however large the pages: the budget holds its bytes back until the page before it is written.
   */
  const fill = (): void => {
    // Once the reader has gone or the walk is interrupted, no new request starts.
    const wanted = () => nextIndex <= lastIndex && queue.length < scheduler.window.allowed && !scheduler.signal.aborted;
    while (wanted() && (queue.length === 0 || scheduler.roomForOne)) {
      queue.push(scheduler.start(urlOf(nextIndex++)));
    }
  };
  /**
   * The page `index`, next to be written: the window's oldest, or asked for now. The walk ends where a page says so,
   * never because the window ran dry; a window left empty by a stop resumes at this page.
   */
  const take = (index: number): Pending<RawPage> => {
    const p = queue.shift();
    if (p !== undefined) return p;
    if (scheduler.signal.aborted) throw w.failure(interrupted(), urlOf(index));
    nextIndex = index + 1;
    return scheduler.start(urlOf(index));
  };
  try {
    // The first page's link is checked like every other's: against the pages written before it.
    let linked = w.links.written(first, first.url, first.url, w.wantsMoreAfter(first));
    if (linked.error === undefined) fill();
    // An interrupt may leave the window empty while pages remain: the rest still starts at the next index.
    await w.emit(first, linked.error === undefined ? (queue[0]?.url ?? urlOf(nextIndex)) : undefined);
    if (linked.error !== undefined) throw w.stopped(linked.error, undefined);
    fill();
    // The queue holds consecutive pageIndexes from the front, so the page shifted is the one after the last.
    for (let index = firstIndex + 1; ; index++) {
      const p = take(index);
      const page = w.parse(await awaitWindow(w, p));
      const more = page.next !== undefined && w.wantsMoreAfter(page);
      // The page was asked for where the links led, so it is the page the walk by links writes. Where its own link
      // leads elsewhere than the next page planned (a collection that grew past the plan, a server that serves
      // more or fewer items than asked, or numbers its pages otherwise), the walk goes on by its links, checked
      // against every page written so far: the same pages, whatever the window.
      if (more && (index === lastIndex || !linksTo(page.next, linked.url ?? p.url, urlOf(index + 1)))) {
        scheduler.drop(queue);
        return await sequentialFrom(w, stepFrom(w, page, w.links.handOver(p.url, linked.url)));
      }
      // Pages come by pageIndex here, yet a link to another origin or back to a page already written breaks the
      // contract all the same, and says so as the sequential walk would: after this page, with nothing to resume
      // from. The pages in flight after it are dropped unwritten.
      linked = w.links.written(page, p.url, linked.url, w.wantsMoreAfter(page));
      const linkError = linked.error;
      if (more && linkError === undefined) fill();
      else scheduler.drop(queue); // a shrunken collection or the limit: nothing after this page is wanted
      // An interrupt may leave the window empty while pages remain: the rest still starts at the next index.
      await w.emit(page, queue[0]?.url ?? (more && linkError === undefined ? urlOf(nextIndex) : undefined));
      if (linkError !== undefined) throw w.stopped(linkError, undefined);
      if (!more) return;
      // The page written has given its bytes back: the window may now hold what did not fit beside it.
      fill();
    }
  } finally {
    // Pages dropped here are cancelled when the walk ends (see PageScheduler.finished).
    scheduler.drop(queue);
  }
}

/** A page of the window awaited, and told to the window: whether the walk had to wait for it, and how it came. */
async function awaitWindow(w: WalkState, p: Pending<RawPage>): Promise<RawPage> {
  const waited = !p.timing.arrived;
  const raw = await w.settle(p);
  w.scheduler.taken(p, waited);
  return raw;
}

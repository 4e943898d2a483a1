/** The walk by links: each page written while the next, which its links.next names, is already being fetched. */
import { contractError, type Page } from './envelope.js';
import type { RawPage } from './get-page.js';
import type { NextLink } from './link-book.js';
import type { Pending } from './page-scheduler.js';
import { peekLinks } from './peek-links.js';
import type { WalkState } from './walk-state.js';

/** A validated page, what follows it, and the request for that already under way. */
export interface Step {
  page: Page;
  next: NextLink;
  pending?: Pending<RawPage>;
}

/**
 * Validates a fetched page and starts fetching the next: before the scan when its links can be read from the end
 * (peekLinks), so the server prepares it meanwhile; after it under --limit, where the item count decides.
 */
export async function advance(w: WalkState, raw: RawPage): Promise<Step> {
  const early = Number.isFinite(w.limit) ? undefined : peekLinks(raw.body);
  if (!early) return stepFrom(w, w.parse(raw), raw.url);
  const next = w.links.follow(early, raw.url);
  const pending = next.url === undefined ? undefined : w.scheduler.start(next.url);
  // node:http sends from a nextTick callback: let it run before the scan.
  if (pending) await new Promise((resolve) => process.nextTick(resolve));
  const page = w.parse(raw);
  // Unreachable for valid JSON (both read the same bytes); a guard against a head start gone wrong.
  if (page.next !== early.next) throw w.stopped(contractError(raw.url, 'inconsistent links'), raw.url);
  return pending ? { page, next, pending } : { page, next };
}

/** A page already validated as a step of the walk: its next link resolved, and fetched when wanted. */
export function stepFrom(w: WalkState, page: Page, url: string): Step {
  const next = w.wantsMoreAfter(page) ? w.links.follow(page, url) : {};
  return next.url !== undefined ? { page, next, pending: w.scheduler.start(next.url) } : { page, next };
}

/** Writes the step's page and follows links from it, always one request ahead. */
export async function sequentialFrom(w: WalkState, first: Step): Promise<void> {
  let step = first;
  for (;;) {
    await w.emit(step.page, step.next.url);
    // The page is valid and written; only its link is unusable, so there is nothing to resume from.
    if (step.next.error !== undefined) throw w.stopped(step.next.error, undefined);
    if (!step.pending) return;
    step = await advance(w, await w.settle(step.pending));
  }
}

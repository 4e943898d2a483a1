/**
 * The pages a walk has written or set out to fetch, and whether a links.next may be followed (the API's origin only,
 * never back to a page in the book): one book for both walks, so a loop is told the same way whatever the window.
 */
import { setQueryParam } from '../apiclient/target.js';
import { pageKey, resolveNextLink } from './links.js';
import { createVisitedPages } from './visited.js';

/** A page's next link: where it leads, or why it cannot be followed (raised once the page is written). */
export interface NextLink {
  url?: string;
  error?: unknown;
}

/** What the book reads of a page: its own links. */
interface PageLinks {
  next?: string;
  self?: string;
}

export class LinkBook {
  private readonly visited = createVisitedPages();

  constructor(private readonly apiOrigin: string) {}

  /** The walk's first request, as it was sent: a link back to it is a loop. */
  enterFirst(url: string): void {
    this.visited.add(pageKey(url));
  }

  /** links.next of the page at `url`, resolved and checked against the book, which it does not enter. */
  check(next: string | undefined, url: string): NextLink {
    if (next === undefined) return {};
    try {
      return { url: resolveNextLink(next, url, this.apiOrigin, this.visited) };
    } catch (error) {
      return { error };
    }
  }

  /** The walk by links: the page's self entered, then its links.next checked and entered as the page to fetch. */
  follow(page: PageLinks, url: string): NextLink {
    this.enterSelf(page.self, url);
    const link = this.check(page.next, url);
    if (link.url !== undefined) this.visited.add(link.url);
    return link;
  }

  /**
   * A page of the walk by pageIndex, about to be written: entered under its URL and its self link, then its links.next
   * checked against the pages written so far (unless nothing after it is `wanted`). Pages in flight are not entered
   * yet: the link to the next of them is no loop. `linked`, the link that led here, only names the page.
   */
  written(page: PageLinks, url: string, linked: string | undefined, wanted: boolean): NextLink {
    this.visited.add(url);
    this.enterSelf(page.self, url);
    if (page.next === undefined || !wanted) return {};
    // Named and resolved as the walk by links would: by the URL the previous page's link spells.
    return this.check(page.next, linked ?? url);
  }

  /** The page the walk by links goes on from after the walk by pageIndex; returns the URL its links resolve against. */
  handOver(url: string, linked: string | undefined): string {
    this.visited.add(url);
    return linked ?? url;
  }

  /** The page's self link counts as visited too: the first request is often spelled otherwise than the links. */
  private enterSelf(self: string | undefined, url: string): void {
    // Usually self is the very URL just fetched, already entered: no URL parse per page then.
    if (self === undefined || this.visited.has(self)) return;
    try {
      const u = new URL(self, url);
      if (self.includes('#')) u.hash = '';
      if (u.origin === this.apiOrigin) this.visited.add(u.href);
    } catch {
      // An unparseable self link is not needed for the walk.
    }
  }
}

/** The page `index` asked for by pageIndex: the first request's query (its filters carry over) and `pageSize`. */
export function indexUrl(firstUrl: string, index: number, pageSize: number): string {
  const u = new URL(firstUrl);
  setQueryParam(u, 'pageIndex', String(index));
  setQueryParam(u, 'pageSize', String(pageSize));
  return pageKey(u);
}

/** Whether links.next (resolved against `base`) names `planned`: origin, path and query in any order. */
export function linksTo(next: string | undefined, base: string, planned: string): boolean {
  if (next === undefined) return false;
  try {
    const [a, b] = [new URL(next, base), new URL(planned)];
    const params = (u: URL): string =>
      JSON.stringify([...u.searchParams].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
    return a.origin === b.origin && a.pathname === b.pathname && params(a) === params(b);
  } catch {
    return false;
  }
}

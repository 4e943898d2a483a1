import { createHash } from 'node:crypto';

/** The pages a walk has fetched, for loop detection (see resolveNextLink). */
export interface VisitedPages {
  has(url: string): boolean;
  add(url: string): void;
}

/**
 * Remembers each page by a 128-bit digest of its URL instead of the URL itself: a server's links can be megabytes
 * long, and a walk of endless distinct cursors must not hold every one of them. A false "already fetched" needs a
 * SHA-256 collision on the first 16 bytes, which no real walk will meet.
 */
export function createVisitedPages(): VisitedPages {
  const seen = new Set<string>();
  const key = (url: string): string => createHash('sha256').update(url).digest().toString('base64', 0, 16);
  return {
    has: (url) => seen.has(key(url)),
    add: (url) => void seen.add(key(url)),
  };
}

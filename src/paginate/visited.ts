/** The pages a walk has fetched, for loop detection (see resolveNextLink). */
export interface VisitedPages {
  has(url: string): boolean;
  add(url: string): void;
}

/** Up to this length a URL is its own key: memory per page stays bounded either way. */
const MAX_PLAIN_URL = 256;

/**
 * Remembers each page by its URL, or by a 128-bit digest of a long one: links can be megabytes, and endless cursors
 * must not all be held. node:crypto loads only for the first long URL.
 */
export function createVisitedPages(): VisitedPages {
  const seen = new Set<string>();
  let hash: typeof import('node:crypto').createHash | undefined;
  // A digest key starts with a space, which no absolute URL does, so the two kinds of key never meet.
  const key = (url: string): string => {
    if (url.length <= MAX_PLAIN_URL) return url;
    hash ??= process.getBuiltinModule('node:crypto').createHash;
    return ` ${hash('sha256').update(url).digest().toString('base64', 0, 16)}`;
  };
  return {
    has: (url) => seen.has(key(url)),
    add: (url) => void seen.add(key(url)),
  };
}

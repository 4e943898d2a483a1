import { ExitCode, IdcliError } from '../errors.js';
import { clip } from '../printable.js';
import { redactUrl } from '../redact.js';
import type { VisitedPages } from './visited.js';

/** The key a page URL is remembered by: as WHATWG serializes it, without the fragment (never sent). */
export function pageKey(url: string | URL): string {
  const u = new URL(url);
  u.hash = '';
  return u.href;
}

/**
 * Resolves links.next of the page at `pageUrl` (RFC 3986 §5) and checks it may be followed: the API's origin (the
 * token must reach no other host) and no page already fetched (a loop). Exit 5 naming the page otherwise.
 */
export function resolveNextLink(
  href: string,
  pageUrl: string,
  apiOrigin: string,
  visited: Pick<VisitedPages, 'has'>,
): string {
  const where = (): string => `page ${redactUrl(pageUrl)}`;
  let next: URL;
  try {
    next = new URL(href, pageUrl);
  } catch (err) {
    throw new IdcliError('CONTRACT_NEXT_LINK_INVALID', `${where()}: links.next is not a valid URL`, ExitCode.CONTRACT, {
      cause: err,
    });
  }
  if (next.origin !== apiOrigin) {
    throw new IdcliError(
      'CONTRACT_NEXT_LINK_CROSS_ORIGIN',
      `${where()}: links.next points to another origin (${clip(next.origin)}); the access token is only sent to ${apiOrigin}`,
      ExitCode.CONTRACT,
    );
  }
  // Setting the fragment reserializes the URL; without a '#' in the link there is none to drop.
  if (href.includes('#')) next.hash = '';
  const key = next.href;
  if (visited.has(key)) {
    throw new IdcliError(
      'CONTRACT_PAGINATION_LOOP',
      `${where()}: links.next leads back to ${redactUrl(key)}, a page already fetched (pagination loop)`,
      ExitCode.CONTRACT,
    );
  }
  return key;
}

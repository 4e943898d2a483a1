/** Where a request of `list` or `api` goes: api-base-url, and a target resolved against it that stays on its origin. */
import { usageError } from '../errors.js';
import { clip, printable } from '../printable.js';
import { paramName, redactUrl } from '../redact.js';

/** api-base-url, else base-url: the API's origin, the only one the access token is sent to. */
export function apiBaseUrl(settings: { apiBaseUrl?: string; baseUrl?: string }): string {
  const base = settings.apiBaseUrl ?? settings.baseUrl;
  if (base === undefined || base === '') {
    throw usageError(
      'API_BASE_URL_MISSING',
      'no API base URL is configured',
      'set --api-base-url or --base-url (or IDCLI_BASE_URL)',
    );
  }
  return base;
}

/** The API's origin: the only one the access token is sent to, and the one every URL of a walk must stay on. */
export function apiOrigin(apiBaseUrl: string): string {
  return parseApiBase(apiBaseUrl).origin;
}

/** api-base-url as a URL, which must be http or https (exit 2 otherwise). */
function parseApiBase(apiBaseUrl: string): URL {
  let base: URL;
  try {
    base = new URL(apiBaseUrl);
  } catch {
    throw usageError('API_BASE_URL_INVALID', `api-base-url is not a valid URL: ${clip(apiBaseUrl)}`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw usageError('API_BASE_URL_INVALID', `api-base-url must be an http or https URL: ${base.origin}`);
  }
  return base;
}

export interface TargetOptions {
  pageSize?: number;
  pageIndex?: number;
  /** Only the count is wanted: ask for pageSize=0 (the contract's way of reading just the metadata). */
  count?: boolean;
}

/**
 * The URL of the request (for `list`, the first page's). A bare path is resolved against api-base-url, which is treated as a
 * directory (`users` under `https://api.example.com/v1` is `/v1/users`) while `/v1/users` is
 * origin-absolute as in RFC 3986 §5.2. Whatever the target looks like, the resolved URL must be of the
 * api-base-url origin: that is the only origin the token is sent to. The WHATWG parser reads `//host`,
 * `\\host`, `/\host` (tabs and newlines dropped first) as scheme-relative, so a "path" can name another host;
 * only the resolved origin tells, and anything else is refused before any request (exit 2).
 */
export function targetUrl(target: string, apiBaseUrl: string, options: TargetOptions = {}): string {
  const base = parseApiBase(apiBaseUrl);
  const trimmed = target.trim();
  // Each command says first what it needs instead; this guards the resolution below, where '' is the base itself.
  if (trimmed === '') throw usageError('TARGET_MISSING', 'no path or URL to send the request to');

  const url = resolveTarget(trimmed, base);
  if (url.origin !== base.origin) {
    // Shown as resolved (which explains a backslash or a tab) and redacted like every URL idcli prints.
    throw usageError(
      'TARGET_CROSS_ORIGIN',
      `${printable(redactUrl(url))} resolves to ${clip(`${url.protocol}//${url.host}`)}, which is not the API origin ${base.origin}; the access token is only sent there`,
      'pass a path under the API, or set --api-base-url to the API you mean',
    );
  }
  if (options.count) setQueryParam(url, 'pageSize', '0');
  else if (options.pageSize !== undefined) setQueryParam(url, 'pageSize', String(options.pageSize));
  if (options.pageIndex !== undefined) setQueryParam(url, 'pageIndex', String(options.pageIndex));
  url.hash = '';
  return url.href;
}

/**
 * Sets one query parameter and leaves every other byte of the query as the user wrote it
 * (URLSearchParams would re-encode the whole query, e.g. %20 into +, which a server may not treat alike).
 */
export function setQueryParam(url: URL, name: string, value: string): void {
  const query = url.search.startsWith('?') ? url.search.slice(1) : url.search;
  const pair = `${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
  const out: string[] = [];
  let placed = false;
  for (const part of query === '' ? [] : query.split('&')) {
    if (paramName(part) === name) {
      if (!placed) out.push(pair);
      placed = true;
    } else out.push(part);
  }
  if (!placed) out.push(pair);
  url.search = out.join('&');
}

/** A full URL as it is; anything else relative to api-base-url taken as a directory. */
function resolveTarget(target: string, base: URL): URL {
  const dir = new URL(base.href);
  if (!dir.pathname.endsWith('/')) dir.pathname += '/';
  dir.search = '';
  dir.hash = '';
  try {
    return new URL(target, dir);
  } catch {
    throw usageError('TARGET_INVALID', `not a valid URL or path: ${clip(printable(target))}`);
  }
}

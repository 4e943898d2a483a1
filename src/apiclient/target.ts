/** Where a request of `list` or `api` goes: api-base-url, and a target resolved against it that stays on its origin. */
import { usageError } from '../errors.js';
import { clip, printable } from '../printable.js';
import { paramName, redactUrl } from '../redact.js';

/** api-base-url, else base-url: the API's origin, the only one the access token is sent to. */
export function apiBaseUrl(settings: { apiBaseUrl?: string; baseUrl?: string }): string {
  const base = settings.apiBaseUrl ?? settings.baseUrl;
  if (base !== undefined && base !== '') return base;
  const hint = 'set --api-base-url or --base-url (or IDCLI_BASE_URL)';
  throw usageError('API_BASE_URL_MISSING', 'no API base URL is configured', hint);
}

/** The API's origin: the only one the access token is sent to, and the one every URL of a walk must stay on. */
export function apiOrigin(apiBaseUrl: string): string {
  return parseApiBase(apiBaseUrl).origin;
}

/**
 * The one comparison of origins before a credential goes out: scheme, host and port, with a scheme's default port
 * the same as no port (`https://h:443` is `https://h`), as WHATWG URL serialises an origin.
 */
export function sameOrigin(a: URL, b: URL): boolean {
  return a.origin !== 'null' && a.origin === b.origin;
}

/** Whether `url` is on the origin of api-base-url or of base-url: the only places the access token is sent to. */
export function onTokenOrigin(url: URL, settings: { apiBaseUrl?: string; baseUrl?: string }): boolean {
  return [settings.apiBaseUrl, settings.baseUrl].some(
    (base) => base !== undefined && URL.canParse(base) && sameOrigin(url, new URL(base)),
  );
}

function parseApiBase(apiBaseUrl: string): URL {
  if (!URL.canParse(apiBaseUrl))
    throw usageError('API_BASE_URL_INVALID', `api-base-url is not a valid URL: ${clip(apiBaseUrl)}`);
  const base = new URL(apiBaseUrl);
  if (base.protocol === 'http:' || base.protocol === 'https:') return base;
  throw usageError('API_BASE_URL_INVALID', `api-base-url must be an http or https URL: ${base.origin}`);
}

export interface TargetOptions {
  pageSize?: number;
  pageIndex?: number;
  /** Ask for pageSize=0, the contract's way of reading just the metadata. */
  count?: boolean;
}

/**
 * A bare path resolves under api-base-url as a directory, `/v1/users` origin-absolute (RFC 3986 §5.2); WHATWG reads
 * `//host` or `\\host` as scheme-relative, so only the resolved origin says whether the token stays home.
 */
export function targetUrl(target: string, apiBaseUrl: string, options: TargetOptions = {}): string {
  const base = parseApiBase(apiBaseUrl);
  const trimmed = target.trim();
  // Each command says first what it needs instead; this guards the resolution below, where '' is the base itself.
  if (trimmed === '') throw usageError('TARGET_MISSING', 'no path or URL to send the request to');

  const url = resolveTarget(trimmed, base);
  if (!sameOrigin(url, base)) {
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

/** Leaves every other byte of the query as written: URLSearchParams would re-encode it (%20 into +). */
export function setQueryParam(url: URL, name: string, value: string): void {
  const query = url.search.startsWith('?') ? url.search.slice(1) : url.search;
  const parts = query === '' ? [] : query.split('&');
  const at = parts.findIndex((part) => paramName(part) === name);
  const out = parts.filter((part) => paramName(part) !== name);
  out.splice(at < 0 ? out.length : at, 0, `${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
  url.search = out.join('&');
}

function resolveTarget(target: string, base: URL): URL {
  const dir = new URL(base.href);
  if (!dir.pathname.endsWith('/')) dir.pathname += '/';
  dir.search = '';
  dir.hash = '';
  if (!URL.canParse(target, dir.href))
    throw usageError('TARGET_INVALID', `not a valid URL or path: ${clip(printable(target))}`);
  return new URL(target, dir);
}

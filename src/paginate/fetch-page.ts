import { ExitCode, IdcliError } from '../errors.js';
import type { HttpClient, RetryInfo } from '../http/client.js';
import { headerValue } from '../http/types.js';
import { clip, printable } from '../printable.js';
import { redactUrl } from '../redact.js';
import type { Bearer } from './bearer.js';
import { type Page, parsePage } from './envelope.js';
import type { SpanTable } from './json-scan.js';

export interface FetchContext {
  http: HttpClient;
  bearer: Bearer;
  maxRetries: number;
  /** Called with every token used, so the logger can redact it. */
  onToken?: (token: string) => void;
  /** Recycled memory for page bodies (see BufferPool). */
  bodyBuffer?: (size: number) => Buffer;
  /** Told before each wait between retries. */
  onRetry?: (info: RetryInfo) => void;
}

/** A 2xx response body, not yet validated. */
export interface RawPage {
  url: string;
  body: Buffer;
  contentType: string | undefined;
}

/** GETs one page and validates it (see fetchRaw and parseRaw). */
export async function fetchPage(ctx: FetchContext, url: string, signal: AbortSignal): Promise<Page> {
  return parseRaw(await fetchRaw(ctx, url, signal));
}

/** Validates a fetched page; a body that is not JSON names its content type, which usually explains it. */
export function parseRaw(raw: RawPage, table?: SpanTable): Page {
  try {
    return parsePage(raw.body, raw.url, table);
  } catch (err) {
    const type = raw.contentType;
    if (err instanceof IdcliError && type !== undefined && !/json/i.test(type)) {
      const shown = clip(printable(type.split(';')[0]!));
      throw new IdcliError(`${err.message} (content-type ${shown})`, ExitCode.CONTRACT, { cause: err });
    }
    throw err;
  }
}

/**
 * GETs one page with the bearer token and returns its body. Transient failures are retried by the
 * HTTP client; a 401 gets exactly one token refresh and one more try (RFC 6750 §3.1 invalid_token).
 * Redirects are never followed: the Authorization header must not travel to wherever Location points.
 */
export async function fetchRaw(ctx: FetchContext, url: string, signal: AbortSignal): Promise<RawPage> {
  // Synchronous when the token is at hand, so the request is under way when this call returns.
  let token = ctx.bearer.ready() ?? (await ctx.bearer.token());
  for (let refreshed = false; ; refreshed = true) {
    ctx.onToken?.(token);
    const res = await ctx.http.requestWithRetry(
      {
        method: 'GET',
        url,
        headers: { accept: 'application/json', authorization: `Bearer ${token}`, 'user-agent': 'idcli' },
        signal,
        bodyBuffer: ctx.bodyBuffer,
      },
      { maxRetries: ctx.maxRetries, onRetry: ctx.onRetry },
    );
    // Built only on failure paths: redacting a URL per page is measurable on long walks.
    const where = (): string => `GET ${redactUrl(url)}`;
    if (res.status === 401) {
      if (!refreshed) {
        token = await ctx.bearer.rejected(token);
        continue;
      }
      throw new IdcliError(`${where()}: the access token was rejected (HTTP 401) even after a refresh`, ExitCode.AUTH, {
        hint: 'sign in again with: idcli login',
      });
    }
    if (res.status >= 200 && res.status < 300) {
      return { url, body: res.body, contentType: headerValue(res.headers, 'content-type') };
    }
    if (res.status >= 300 && res.status < 400) {
      const location = headerValue(res.headers, 'location');
      let target = '';
      try {
        if (location) target = ` to ${new URL(location, url).origin}`;
      } catch {
        // An unparseable Location is simply not named.
      }
      throw new IdcliError(
        `${where()}: the server answered a redirect (HTTP ${res.status})${target}, which idcli does not follow so the access token stays with ${new URL(url).origin}`,
        ExitCode.NETWORK,
        { hint: 'point --api-base-url (or the URL) at the final location' },
      );
    }
    const after = res.retries > 0 ? ` after ${res.retries} ${res.retries === 1 ? 'retry' : 'retries'}` : '';
    // The standard reason phrase, not the server's: the response body and headers stay out of messages.
    // node:http is loaded for its table only here, on the way out: the walk itself never needs it.
    const reason = process.getBuiltinModule('node:http').STATUS_CODES[res.status];
    const phrase = reason ? ` ${reason}` : '';
    throw new IdcliError(`${where()} failed: HTTP ${res.status}${phrase}${after}`, ExitCode.NETWORK, {
      ...(res.status === 404 ? { hint: 'check the collection path and --api-base-url' } : {}),
      ...(res.status === 403 ? { hint: 'the signed-in user may lack access to this collection' } : {}),
    });
  }
}

/** One page's GET: its 2xx body (fetchRaw) and its validation (parseRaw); page-scheduler.ts decides when each goes. */
import type { ApiClient } from '../apiclient/client.js';
import { responseError } from '../apiclient/status-errors.js';
import { ExitCode, IdcliError } from '../errors.js';
import type { RetryInfo } from '../http/client.js';
import { type HttpRequest, headerValue } from '../http/types.js';
import { clip, printable } from '../printable.js';
import { type Page, parsePage } from './envelope.js';
import type { SpanTable } from './json-scan.js';

export interface FetchContext {
  client: ApiClient;
  /** Recycled memory for page bodies (see BufferPool). */
  bodyBuffer?: (size: number) => Buffer;
  /** Told before each wait between retries. */
  onRetry?: (info: RetryInfo) => void;
  /** See HttpRequest.onBodyBytes. */
  onBodyBytes?: HttpRequest['onBodyBytes'];
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
      throw new IdcliError(err.code, `${err.message} (content-type ${shown})`, ExitCode.CONTRACT, { cause: err });
    }
    throw err;
  }
}

/** The status of the non-2xx answer a page request failed with, if that is how it failed. */
export function refusedWith(err: unknown): number | undefined {
  return err instanceof IdcliError ? err.status : undefined;
}

/** GETs one page with the access token (see ApiClient.send) and returns its 2xx body. */
export async function fetchRaw(ctx: FetchContext, url: string, signal: AbortSignal): Promise<RawPage> {
  const res = await ctx.client.send(
    { method: 'GET', url, signal, bodyBuffer: ctx.bodyBuffer, onBodyBytes: ctx.onBodyBytes },
    { onRetry: ctx.onRetry },
  );
  // A refresh that failed is not the server refusing the page: only a status error carries the status.
  const err = responseError('GET', url, res);
  if (err !== undefined) throw err;
  return { url, body: res.body, contentType: headerValue(res.headers, 'content-type') };
}

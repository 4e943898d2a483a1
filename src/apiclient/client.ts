// The authenticated client of `list` and `api`: one refresh and one more try after a 401 (RFC 6750 §3.1). Redirects
// are never followed, so the token never travels to wherever Location points.
import type { CommandContext } from '../context.js';
import { createHttpClient, type RetriedResponse, type RetryInfo } from '../http/client.js';
import { canResend, type HttpRequest } from '../http/types.js';
import { createBearer } from './bearer.js';
import { clockOf } from '../clock.js';

/** The fields a request goes out with (but Authorization): the defaults, under the caller's own. */
export function requestHeaders(own: Readonly<Record<string, string>> = {}): Record<string, string> {
  return { accept: 'application/json', 'user-agent': 'idcli', ...own };
}

export interface ApiClientOptions {
  maxSockets: number;
  /** --max-retries */
  maxRetries: number;
}

export interface SendOptions {
  /** Told before each wait between retries, besides the user's notice of a long one. */
  onRetry?: (info: RetryInfo) => void;
}

export interface ApiResponse extends RetriedResponse {
  /** A 401 not tried again: the refresh failed, or the body went out as it was read (see responseError). */
  unrepeated?: { because: 'refresh'; error: Error } | { because: 'body' };
}

export interface ApiClient {
  /** After a 401, once more with a fresh token; resolves with the last response, whatever its status. */
  send(req: HttpRequest, options?: SendOptions): Promise<ApiResponse>;
  close(): void;
}

/** Opens the client. The first token is fetched before any request so "not signed in" fails fast (exit 3). */
export async function openApiClient(ctx: CommandContext, options: ApiClientOptions): Promise<ApiClient> {
  const { deps } = ctx;
  const bearer = createBearer(await ctx.tokens(), () => deps.now());
  deps.log.addSecret(await bearer.token());
  const http = createHttpClient({
    log: deps.log,
    env: deps.env,
    deadlineMs: ctx.settings.httpTimeoutMs,
    compress: ctx.settings.httpCompression,
    maxSockets: options.maxSockets,
    clock: clockOf(deps),
  });

  const attempt = (req: HttpRequest, token: string, o: SendOptions): Promise<RetriedResponse> => {
    deps.log.addSecret(token);
    const headers = { ...requestHeaders(req.headers), authorization: `Bearer ${token}` };
    const onRetry = (info: RetryInfo): void => {
      o.onRetry?.(info);
      // Waits long enough to look like a hang are told; short backoffs stay in --verbose.
      if (info.delayMs >= 2000) {
        const wait = Math.round(info.delayMs / 1000);
        deps.log.info(`${info.reason}; retrying in ${wait} s (retry ${info.attempt} of ${options.maxRetries})`);
      }
    };
    return http.requestWithRetry({ ...req, headers }, { maxRetries: options.maxRetries, onRetry });
  };

  async function send(req: HttpRequest, o: SendOptions = {}): Promise<ApiResponse> {
    // Synchronous when the token is at hand, so the request is under way when this call returns (a prefetch).
    const token = bearer.ready() ?? (await bearer.token());
    const res = await attempt(req, token, o);
    if (res.status !== 401) return res;
    let fresh: string;
    try {
      fresh = await bearer.rejected(token);
    } catch (error) {
      // A refresh fails with an Error; anything else thrown is a fault of idcli's and goes up as it is.
      if (!(error instanceof Error)) throw error;
      return { ...res, unrepeated: { because: 'refresh', error } };
    }
    if (!canResend(req.body)) return { ...res, unrepeated: { because: 'body' } };
    deps.log.verbose('the access token was rejected (HTTP 401); repeating the request once with a fresh one');
    return attempt(req, fresh, o);
  }

  return { send, close: () => http.close() };
}

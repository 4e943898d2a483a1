/**
 * The authenticated HTTP client of `list` and `api`: one keep-alive client for the run, the default header fields
 * and the access token in the Authorization header of every request, one refresh and one more try after a 401
 * (RFC 6750 §3.1 invalid_token), and the transient failures of GET, HEAD and OPTIONS retried. Redirects are never
 * followed (see Transport), so the token never travels to wherever Location points.
 */
import type { CommandContext } from '../context.js';
import { createHttpClient, type RetriedResponse, type RetryInfo } from '../http/client.js';
import { announceLongWaits } from '../http/retry.js';
import { canResend, type HttpRequest } from '../http/types.js';
import { createBearer } from './bearer.js';

/** The fields every API request carries unless the caller sets them otherwise. */
const API_HEADERS: Readonly<Record<string, string>> = { accept: 'application/json', 'user-agent': 'idcli' };

/** The fields a request goes out with (but Authorization): the defaults, under the caller's own. */
export function requestHeaders(own: Readonly<Record<string, string>> = {}): Record<string, string> {
  return { ...API_HEADERS, ...own };
}

export interface ApiClientOptions {
  /** Connections kept open at once: one per request in flight. */
  maxSockets: number;
  /** --max-retries: retries of a transient failure after the first attempt. */
  maxRetries: number;
}

export interface SendOptions {
  /** Told before each wait between retries, besides the user's notice of a long one. */
  onRetry?: (info: RetryInfo) => void;
}

/**
 * Why a 401 stayed the answer without a second try: no fresh token came (the refresh's own error), or the request's
 * body went out as it was read and cannot be sent again (the fresh token is stored).
 */
export type Unrepeated = { because: 'refresh'; error: unknown } | { because: 'body' };

export interface ApiResponse extends RetriedResponse {
  /** Set on a 401 that was not repeated; see responseError for what the command says then. */
  unrepeated?: Unrepeated;
}

export interface ApiClient {
  /**
   * `req` with the default fields and the current access token; after a 401, once more with a fresh one. Resolves
   * with the last response, whatever its status, for the caller to show and to turn into its error (responseError).
   */
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
    now: () => deps.now(),
  });
  const announce = announceLongWaits((m) => deps.log.info(m), options.maxRetries);

  const attempt = (req: HttpRequest, token: string, o: SendOptions): Promise<RetriedResponse> => {
    deps.log.addSecret(token);
    const headers = { ...requestHeaders(req.headers), authorization: `Bearer ${token}` };
    return http.requestWithRetry(
      { ...req, headers },
      {
        maxRetries: options.maxRetries,
        onRetry: (info) => {
          o.onRetry?.(info);
          announce(info);
        },
      },
    );
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
      return { ...res, unrepeated: { because: 'refresh', error } };
    }
    if (!canResend(req.body)) return { ...res, unrepeated: { because: 'body' } };
    deps.log.verbose('the access token was rejected (HTTP 401); repeating the request once with a fresh one');
    return attempt(req, fresh, o);
  }

  return { send, close: () => http.close() };
}

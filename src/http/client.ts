import { ExitCode, IdcliError } from '../errors.js';
import type { Logger } from '../log.js';
import { clip, printable } from '../printable.js';
import { redactUrl } from '../redact.js';
import type { Env } from './proxy-env.js';
import { type BackoffPolicy, DEFAULT_BACKOFF, isRetried, RETRYABLE_STATUSES, retryDelay } from './retry.js';
import { sleep, systemClock } from '../clock.js';
import { createTransport, type TransportOptions } from './transport.js';
import { canResend, headerValue, type HttpRequest, type HttpResponse, NetworkError } from './types.js';

export interface HttpClientOptions extends TransportOptions {
  /** Verbose tracing goes here; the URL is redacted and headers are never logged (they carry the token). */
  log?: Pick<Logger, 'verbose'> & Partial<Pick<Logger, 'isVerbose'>>;
  /** Its HTTPS_PROXY/HTTP_PROXY/NO_PROXY route every request; without it requests go direct. */
  env?: Env;
  /** Overrides the clock's now() for Retry-After dates. */
  now?: () => number;
  random?: () => number;
}

export interface RetryOptions extends Partial<BackoffPolicy> {
  /** Called before each wait, to tell the user why nothing is happening. */
  onRetry?: (info: RetryInfo) => void;
}

export interface RetryInfo {
  attempt: number;
  delayMs: number;
  /** e.g. "HTTP 429" or a network error's message; never a secret. */
  reason: string;
  status?: number;
}

export interface RetriedResponse extends HttpResponse {
  /** How many retries it took (0 = the first attempt answered). */
  retries: number;
}

export interface HttpClient {
  /** One attempt, traced. Network failures reject with NetworkError; abort rejects with the signal's reason. */
  request(req: HttpRequest): Promise<HttpResponse>;
  /** Retries safe requests (never a read-once body); the last response whatever its status, else exit 4. */
  requestWithRetry(req: HttpRequest, options?: RetryOptions): Promise<RetriedResponse>;
  close(): void;
}

export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const transport = createTransport(options.env ?? {}, options);
  const clock = options.clock ?? systemClock;
  const now = options.now ?? (() => clock.now());
  const random = options.random ?? Math.random;
  // Tracing is skipped entirely when nobody reads it: redacting a URL per page is measurable on long walks.
  const log = options.log?.isVerbose === false ? undefined : options.log;

  async function request(req: HttpRequest): Promise<HttpResponse> {
    if (!log) return transport.send(req);
    const started = clock.monotonic();
    const elapsed = (): number => Math.round(clock.monotonic() - started);
    const label = `${req.method} ${redactUrl(req.url)}`;
    try {
      const res = await transport.send(req);
      const coding = headerValue(res.headers, 'content-encoding');
      const wire = coding === undefined ? '' : `, ${clip(printable(coding), 20)}`;
      log.verbose(`${label} -> ${res.status} (${elapsed()} ms, ${res.body.length} bytes${wire})`);
      return res;
    } catch (err) {
      const what = err instanceof NetworkError ? err.code : err instanceof IdcliError ? 'refused' : 'aborted';
      log.verbose(`${label} -> ${what} (${elapsed()} ms)`);
      throw err;
    }
  }

  async function requestWithRetry(req: HttpRequest, retry: RetryOptions = {}): Promise<RetriedResponse> {
    const policy: BackoffPolicy = {
      maxRetries: retry.maxRetries ?? DEFAULT_BACKOFF.maxRetries,
      baseDelayMs: retry.baseDelayMs ?? DEFAULT_BACKOFF.baseDelayMs,
      maxDelayMs: retry.maxDelayMs ?? DEFAULT_BACKOFF.maxDelayMs,
      maxRetryAfterMs: retry.maxRetryAfterMs ?? DEFAULT_BACKOFF.maxRetryAfterMs,
    };
    // A body that can be read only once cannot go out a second time, whatever the method.
    const retriable = isRetried(req.method) && canResend(req.body);
    for (let attempt = 0; ; attempt++) {
      const canRetry = retriable && attempt < policy.maxRetries;
      let res: HttpResponse | undefined;
      let reason: string;
      try {
        res = await request(req);
        if (!RETRYABLE_STATUSES.has(res.status) || !canRetry) return { ...res, retries: attempt };
        reason = `HTTP ${res.status}`;
      } catch (err) {
        if (!(err instanceof NetworkError)) throw err;
        if (!canRetry || !err.retriable) {
          const after = attempt > 0 ? ` (after ${attempt} ${attempt === 1 ? 'retry' : 'retries'})` : '';
          const once = isRetried(req.method) ? '' : '; not repeated, as it may have reached the server';
          throw new IdcliError(
            'NETWORK_REQUEST_FAILED',
            `${req.method} ${redactUrl(req.url)} failed: ${err.message}${after}${once}`,
            ExitCode.NETWORK,
            { cause: err },
          );
        }
        reason = err.message;
      }
      const delayMs = retryDelay(attempt, res, policy, now(), random);
      retry.onRetry?.({ attempt: attempt + 1, delayMs, reason, ...(res ? { status: res.status } : {}) });
      log?.verbose(
        `retrying ${req.method} ${redactUrl(req.url)} in ${delayMs} ms (${reason}, retry ${attempt + 1} of ${policy.maxRetries})`,
      );
      await sleep(clock, delayMs, req.signal);
    }
  }

  return { request, requestWithRetry, close: () => transport.close() };
}

/** A one-off request on its own short-lived client (no retries), for callers that make a single call. */
export async function request(
  req: HttpRequest & Pick<HttpClientOptions, 'log' | 'env' | 'deadlineMs' | 'compress' | 'clock'>,
): Promise<HttpResponse> {
  const { log, env, deadlineMs, compress, clock } = req;
  const client = createHttpClient({ log, env, deadlineMs, compress, maxSockets: 1, ...(clock && { clock }) });
  try {
    return await client.request(req);
  } finally {
    client.close();
  }
}

import { DEFAULT_MAX_RETRIES } from '../request-defaults.js';
import { headerValue, type HttpResponse } from './types.js';

/** 429 (RFC 6585 §4) and RFC 9110 §15.6.3–15.6.5; a plain 500 is usually a bug that a retry only repeats. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

export interface BackoffPolicy {
  /** Retries after the first attempt; 0 disables retrying. */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Retry-After beyond this is clamped: a CLI should not sleep for an hour on a server's say-so. */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = {
  maxRetries: DEFAULT_MAX_RETRIES,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 60_000,
};

function backoffCeiling(attempt: number, policy: BackoffPolicy): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempt, 30));
}

/** Half the ceiling: no retry comes sooner, so answers asking for no wait cannot spend every retry at once. */
export function backoffFloor(attempt: number, policy: BackoffPolicy): number {
  return Math.floor(backoffCeiling(attempt, policy) / 2);
}

/** "Equal jitter": clients that failed together come back spread out, none sooner than the floor. */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const floor = backoffFloor(attempt, policy);
  return floor + Math.floor(random() * (backoffCeiling(attempt, policy) - floor));
}

/** Retry-After (RFC 9110 §10.2.3) in milliseconds, or undefined when absent or unparseable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // An HTTP-date names a weekday and "GMT": a letter keeps Date.parse from reading "1.5" as a year.
  if (!/[a-z]/i.test(v)) return undefined;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

/** The larger of Retry-After (clamped) and the backoff floor, plus jitter so clients told the same do not collide. */
export function retryDelay(
  attempt: number,
  res: HttpResponse | undefined,
  policy: BackoffPolicy,
  nowMs: number,
  random: () => number = Math.random,
): number {
  const backoff = backoffDelay(attempt, policy, random);
  const hinted = res ? parseRetryAfter(headerValue(res.headers, 'retry-after'), nowMs) : undefined;
  if (hinted === undefined) return backoff;
  const floor = backoffFloor(attempt, policy);
  const wait = Math.max(Math.min(hinted, policy.maxRetryAfterMs), floor) + (backoff - floor);
  // The clamp shortens a long Retry-After, never the backoff itself.
  return Math.max(backoff, Math.min(wait, policy.maxRetryAfterMs));
}

/** Only safe methods (RFC 9110 §9.2.1) are repeated: a failed attempt may still have reached the server. */
export function isRetried(method: string): boolean {
  return ['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase());
}

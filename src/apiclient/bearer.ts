import type { TokenSource } from '../deps.js';
import { MIN_TTL_SEC } from '../token-rules.js';

/** The access token as the walker sees it: cheap to ask for on every page, refreshed once per 401. */
export interface Bearer {
  token(): Promise<string>;
  /** The token token() would give, when settled: an await per page would delay the prefetch past the page's scan. */
  ready(): string | undefined;
  /** The server answered 401 to `token`: a fresh one, shared by concurrent callers (refresh tokens are single-use). */
  rejected(token: string): Promise<string>;
}

/** Asks the source again at most every `recheckMs` (it may read the keychain): a long walk refreshes before expiry. */
export function createBearer(source: TokenSource, now: () => number, recheckMs = 30_000): Bearer {
  let current: Promise<string> | undefined;
  let checkedAt = 0;
  let refreshing: { rejected: string; promise: Promise<string> } | undefined;
  // The value `current` settled with (undefined while it is pending or if it failed).
  let settled: string | undefined;

  const track = (p: Promise<string>): Promise<string> => {
    settled = undefined;
    p.then(
      (t) => {
        if (current === p) settled = t;
      },
      () => {},
    );
    return p;
  };

  const stale = (): boolean => now() - checkedAt >= recheckMs;
  return {
    token() {
      if (current === undefined || stale()) {
        checkedAt = now();
        current = track(source.get(MIN_TTL_SEC));
      }
      return current;
    },
    ready: () => (current === undefined || stale() ? undefined : settled),
    rejected(token) {
      if (refreshing?.rejected === token) return refreshing.promise;
      const previous = current;
      // Registered synchronously so that 401s arriving together all join this one refresh.
      const promise = (async () => {
        const latest = previous ? await previous.catch(() => undefined) : undefined;
        if (latest !== undefined && latest !== token) return latest;
        return source.refresh(token);
      })();
      refreshing = { rejected: token, promise };
      current = track(promise);
      checkedAt = now();
      return promise;
    },
  };
}

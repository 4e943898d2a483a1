/** The clock every rule about time reads (retries, deadlines, timeouts, expiry), so that a run's time can be driven. */

/** A pending call of Clock.setTimeout. */
export interface Timer {
  clear(): void;
  /** Starts the wait over from now, as Node's timeout.refresh() does. */
  refresh(): void;
}

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Milliseconds from an arbitrary start, with fractions, never going back: for timing how long something takes. */
  monotonic(): number;
  /** Calls `fn` once `ms` of this clock have passed, unless cleared first. */
  setTimeout(fn: () => void, ms: number): Timer;
}

/** The machine's clock and Node's timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    return { clear: () => clearTimeout(t), refresh: () => void t.refresh() };
  },
};

/** The clock of `deps`: its own, or its now() with Node's timers. */
export function clockOf(deps: { now(): number; clock?: Clock | undefined }): Clock {
  return (
    deps.clock ?? {
      now: () => deps.now(),
      monotonic: () => systemClock.monotonic(),
      setTimeout: (fn, ms) => systemClock.setTimeout(fn, ms),
    }
  );
}

/** Resolves after `ms` of `clock`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      timer.clear();
      reject(signal?.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A signal that aborts with a TimeoutError once `ms` of `clock` have passed, as AbortSignal.timeout() does. */
export function timeoutSignal(clock: Clock, ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = clock.setTimeout(
    () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    ms,
  );
  return { signal: controller.signal, clear: () => timer.clear() };
}

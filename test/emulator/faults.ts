// The fault queue: tests script failures (statuses, drops, latency, bad bodies, bad links) per path.
import type { Fault, FaultSpec } from './types.js';

interface Pending {
  path: string;
  nth: number;
  times: number;
  seen: number; // matching requests since injection
  applied: number;
  forMs: number | undefined;
  /** A forMs fault: when its storm ends (on the queue's clock), set as it first applies. */
  endsAt: number | undefined;
  params: Array<[string, string]>;
  fault: Fault;
}

export class FaultQueue {
  private queue: Pending[] = [];

  /** `now` is the clock forMs storms are measured on. */
  constructor(private readonly now: () => number = () => performance.now()) {}

  inject(f: FaultSpec): void {
    const nth = f.nth ?? 1;
    const times = f.times ?? 1;
    if (!Number.isInteger(nth) || nth < 1) throw new Error('nth must be an integer ≥ 1');
    if (!(times === Number.POSITIVE_INFINITY || (Number.isInteger(times) && times >= 1))) {
      throw new Error('times must be an integer ≥ 1 or Infinity');
    }
    if (f.forMs !== undefined && (f.times !== undefined || !(f.forMs > 0))) {
      throw new Error('forMs must be a positive number, without times');
    }
    const params = Object.entries(f.params ?? {});
    const { path, forMs, fault } = f;
    this.queue.push({ path, nth, times, seen: 0, applied: 0, forMs, endsAt: undefined, params, fault });
  }

  clear(): void {
    this.queue = [];
  }

  /**
   * The fault for this request, if any. Every pending fault on the path counts the request; the first one
   * that is due applies. A fault that is due but shadowed by an earlier one stays due, so two faults queued
   * for the same request hit two consecutive requests.
   */
  take(pathname: string, query: URLSearchParams = new URLSearchParams()): Fault | null {
    let chosen: Pending | null = null;
    for (const f of this.queue) {
      if (f.path !== pathname && f.path !== '*') continue;
      if (f.params.some(([name, value]) => query.get(name) !== value)) continue;
      f.seen += 1;
      if (chosen === null && f.seen >= f.nth && !this.over(f)) chosen = f;
    }
    this.queue = this.queue.filter((f) => !this.over(f));
    if (chosen === null) return null;
    chosen.applied += 1;
    if (chosen.forMs !== undefined) chosen.endsAt ??= this.now() + chosen.forMs;
    else if (chosen.applied >= chosen.times) this.queue = this.queue.filter((f) => f !== chosen);
    return chosen.fault;
  }

  /** Whether a forMs fault's storm is over. */
  private over(f: Pending): boolean {
    return f.endsAt !== undefined && this.now() >= f.endsAt;
  }
}

// The fault queue: tests script failures (statuses, drops, latency, bad bodies, bad links) per path.
import type { Fault, FaultSpec } from './types.js';

interface Pending {
  path: string;
  nth: number;
  times: number;
  seen: number; // matching requests since injection
  applied: number;
  params: Array<[string, string]>;
  fault: Fault;
}

export class FaultQueue {
  private queue: Pending[] = [];

  inject(f: FaultSpec): void {
    const nth = f.nth ?? 1;
    const times = f.times ?? 1;
    if (!Number.isInteger(nth) || nth < 1) throw new Error('nth must be an integer ≥ 1');
    if (!(times === Number.POSITIVE_INFINITY || (Number.isInteger(times) && times >= 1))) {
      throw new Error('times must be an integer ≥ 1 or Infinity');
    }
    const params = Object.entries(f.params ?? {});
    this.queue.push({ path: f.path, nth, times, seen: 0, applied: 0, params, fault: f.fault });
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
      if (chosen === null && f.seen >= f.nth) chosen = f;
    }
    if (chosen === null) return null;
    chosen.applied += 1;
    if (chosen.applied >= chosen.times) this.queue = this.queue.filter((f) => f !== chosen);
    return chosen.fault;
  }
}

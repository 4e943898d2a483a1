/**
 * A clock that moves only when the test says: the time of a run in process (runCommand), so a test of a timeout, a
 * retry's wait or an expiry asserts the time the CLI counted instead of waiting for it. It replaces only what the run
 * reads through its Deps: the emulator and the sockets in the same process keep Node's own timers, which vitest's
 * fake timers would stop too.
 */
import type { Clock, Timer } from '../../src/clock.js';
import { until } from './until.js';

interface Pending {
  at: number;
  ms: number;
  fn: () => void;
  seq: number;
}

export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Set<Pending>();

  /** Starts at the machine's time by default: the stores and the emulator stamp records with it. */
  constructor(start = Date.now()) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /** The same time: a run in process times its pages and requests in the test's time too. */
  monotonic(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    const t: Pending = { at: this.#now + Math.max(0, ms), ms, fn, seq: this.#seq++ };
    this.#timers.add(t);
    return {
      clear: () => void this.#timers.delete(t),
      refresh: () => {
        if (!this.#timers.has(t)) this.#timers.add(t);
        t.at = this.#now + Math.max(0, t.ms);
      },
    };
  }

  /** The delays (ms) of the timers not yet fired, in the order they fall due. */
  pending(): number[] {
    return this.#sorted().map((t) => t.ms);
  }

  /** Moves time on by `ms`, firing each timer that falls due on the way at its own time, in order. */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      const [next] = this.#sorted();
      if (!next || next.at > end) break;
      this.#timers.delete(next);
      this.#now = next.at;
      next.fn();
    }
    this.#now = end;
  }

  /** Waits (on real time, with a deadline) until a timer of `ms` is pending, then moves time on to when it fires. */
  async elapse(ms: number, what = `a ${ms} ms timer`): Promise<void> {
    const t = await until(() => this.#sorted().find((p) => p.ms === ms), 20_000, what);
    this.advance(t.at - this.#now);
  }

  /**
   * Waits (on real time, with a deadline) for a pending timer whose delay `which` picks, then moves time on to when it
   * fires; resolves with that delay. E.g. a retry's wait, told from the HTTP deadline pending during a request.
   */
  async elapseFirst(which: (ms: number) => boolean, what = 'a timer'): Promise<number> {
    const t = await until(() => this.#sorted().find((p) => which(p.ms)), 20_000, what);
    this.advance(t.at - this.#now);
    return t.ms;
  }

  /**
   * Moves time on, to one pending timer after another, until `work` settles: for work that waits on this clock (a
   * lock's polls and deadlines), however much of its time that takes. Only timers whose delay `which` picks are let
   * fire, e.g. a lock's polls but not a sign-in's timeout. Resolves or rejects as `work` does.
   */
  async runUntilSettled<T>(work: Promise<T>, what = 'the work', which = (_ms: number) => true): Promise<T> {
    let settled = false;
    const watched = work.finally(() => {
      settled = true;
    });
    watched.catch(() => {});
    for (;;) {
      const due = () => this.#sorted().find((p) => which(p.ms));
      const next = await until(() => (settled ? null : due()), 20_000, `${what} to end or wait`);
      if (next === null) return watched;
      this.advance(next.at - this.#now);
    }
  }

  #sorted(): Pending[] {
    return [...this.#timers].sort((a, b) => a.at - b.at || a.seq - b.seq);
  }
}

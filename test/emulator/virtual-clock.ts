// A clock for the emulator's own tests of its waits (latency, bandwidth, round trips): time moves on to the next
// timer as soon as the event loop has had a turn for the sockets, so a test reads what the emulator waited from
// clock.now() instead of timing it, and a second of link time takes no second of the machine's.
import type { EmulatorClock } from './types.js';

interface Pending {
  at: number;
  fn: () => void;
  seq: number;
}

export class VirtualClock implements EmulatorClock {
  #now = 0;
  #seq = 0;
  #stepping = false;
  readonly #timers = new Set<Pending>();

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): { clear(): void } {
    const t: Pending = { at: this.#now + Math.max(0, ms), fn, seq: this.#seq++ };
    this.#timers.add(t);
    this.#step();
    return { clear: () => void this.#timers.delete(t) };
  }

  /**
   * Once the event loop has had two more turns for the sockets, time jumps to the earliest timer, which fires; then
   * the next, the same way. A reply written at once reaches a client on loopback in the next turn's I/O phase, so a
   * client sees it before the clock moves: time passes only for what waits on a timer. Time never passes a timer
   * that is not yet due, so concurrent waits overlap as they would on the machine's clock.
   */
  #step(): void {
    if (this.#stepping) return;
    this.#stepping = true;
    const fire = () => {
      this.#stepping = false;
      const [next] = [...this.#timers].sort((a, b) => a.at - b.at || a.seq - b.seq);
      if (next === undefined) return;
      this.#timers.delete(next);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
      if (this.#timers.size > 0) this.#step();
    };
    setImmediate(() => setImmediate(fire));
  }
}

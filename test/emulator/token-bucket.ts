// A token bucket that hands out reservations (as Go's rate.Limiter does): a taker is told how long to wait for
// its bytes, and the bytes are spoken for at once. Later takers queue behind that debt, so several connections
// share one rate in the order they asked, and a late timer wastes no bandwidth while the bucket refills.

export class TokenBucket {
  private tokens: number;
  private last: number;

  /**
   * @param ratePerMs bytes added per millisecond
   * @param burst the most bytes that can pass at once after a quiet spell
   */
  constructor(
    readonly ratePerMs: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(ratePerMs > 0) || !(burst >= 1)) throw new Error('a token bucket needs a positive rate and burst');
    this.tokens = burst;
    this.last = now();
  }

  /** Reserves `n` bytes (at most the burst); the milliseconds to wait before sending them. */
  reserve(n: number): number {
    if (n > this.burst) throw new Error(`cannot reserve ${n} bytes at once, the burst is ${this.burst}`);
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + (t - this.last) * this.ratePerMs);
    this.last = t;
    this.tokens -= n;
    return this.tokens >= 0 ? 0 : -this.tokens / this.ratePerMs;
  }
}

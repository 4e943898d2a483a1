// The network between the emulator and its clients: one shared byte budget for every response (a token bucket
// with a small burst) and a latency paid before each response, like a bottleneck link with a round trip.
import { TokenBucket } from './token-bucket.js';
import type { EmulatorClock, LinkOptions } from './types.js';

/** A write on a shaped link; the burst holds two, so one piece can leave while the next waits its turn. */
export const LINK_PIECE = 8 * 1024;
export const LINK_BURST = 2 * LINK_PIECE;

export class Link {
  readonly latencyMs: number;
  private readonly bucket: TokenBucket | null;
  private taken = 0;

  /** `sleep` waits on `clock`, the clock the byte budget refills by. */
  constructor(
    opts: LinkOptions,
    clock: EmulatorClock,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {
    const { bandwidthMbps, latencyMs = 0 } = opts;
    if (bandwidthMbps !== undefined && !(Number.isFinite(bandwidthMbps) && bandwidthMbps > 0)) {
      throw new Error('link bandwidth must be a positive number of Mbit/s');
    }
    if (!(Number.isFinite(latencyMs) && latencyMs >= 0)) throw new Error('link latency must be ≥ 0 ms');
    this.latencyMs = latencyMs;
    // Mbit/s are 10^6 bits per second, as links are sold: 125 bytes per millisecond per Mbit/s.
    this.bucket =
      bandwidthMbps === undefined ? null : new TokenBucket(bandwidthMbps * 125, LINK_BURST, () => clock.now());
  }

  /** Whether bytes are paced; without a bandwidth they go out at socket speed. */
  get shaped(): boolean {
    return this.bucket !== null;
  }

  /** The latency, paid once before a response leaves. */
  async delay(): Promise<void> {
    if (this.latencyMs > 0) await this.sleep(this.latencyMs);
  }

  /** The bytes charged to the byte budget so far (none when the link is not shaped). */
  get charged(): number {
    return this.taken;
  }

  /** Waits until `n` bytes may go out (at once when the link is not shaped). */
  async take(n: number): Promise<void> {
    if (this.bucket === null) return;
    this.taken += n;
    let wait = 0;
    for (let left = n; left > 0; left -= LINK_BURST) wait = this.bucket.reserve(Math.min(left, LINK_BURST));
    if (wait > 0) await this.sleep(wait);
  }
}

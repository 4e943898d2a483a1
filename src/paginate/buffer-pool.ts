/**
 * A handful of page-sized buffers recycled through a walk. Each page body would otherwise be a fresh
 * off-heap allocation that lingers until V8 next collects, and on a long walk that garbage, not the data
 * in flight, is what drives the process's memory up. A buffer goes back only once the bytes written from
 * it have been flushed, so a slow stream can never see a buffer reused under it.
 */
export interface BufferPool {
  /** A buffer of at least `size` bytes. */
  take(size: number): Buffer;
  /** Returns a buffer (or any view of one) that came from take(); others are ignored. */
  give(view: Buffer): void;
}

export function createBufferPool(maxFree: number): BufferPool {
  const ours = new WeakSet<ArrayBufferLike>();
  const free: Buffer[] = [];
  return {
    take(size) {
      const i = free.findLastIndex((b) => b.length >= size);
      if (i >= 0) return free.splice(i, 1)[0]!;
      const b = Buffer.allocUnsafeSlow(roundedUp(size));
      ours.add(b.buffer);
      return b;
    },
    give(view) {
      if (!ours.has(view.buffer) || free.length >= maxFree) return;
      const whole = Buffer.from(view.buffer);
      if (!free.some((b) => b.buffer === whole.buffer)) free.push(whole);
    },
  };
}

/**
 * Sizes are rounded up to one of eight steps per power of two, so that pages of slightly different sizes share
 * buffers while a large page wastes at most an eighth of its size (a power of two could waste nearly half).
 */
export function roundedUp(size: number): number {
  if (size <= 64 * 1024) return 64 * 1024;
  const step = 2 ** (Math.floor(Math.log2(size)) - 3);
  return Math.ceil(size / step) * step;
}

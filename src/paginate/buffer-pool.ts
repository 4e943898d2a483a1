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

/**
 * Keeps at most `maxFree` buffers, and at most `maxFreeBytes()` bytes of them: a buffer that was written to stays in
 * memory while it waits, so free buffers count against a walk's bound on the bytes it holds. The bound is applied
 * whenever a buffer is taken or given, since the bytes held change in between. To make room, the smallest go first
 * (pages that grow never use them again); a buffer that does not fit even then is left to the collector.
 */
export function createBufferPool(maxFree: number, maxFreeBytes = () => Number.POSITIVE_INFINITY): BufferPool {
  const ours = new WeakSet<ArrayBufferLike>();
  const free: Buffer[] = [];
  let freeBytes = 0;
  const remove = (i: number): Buffer => {
    const [b] = free.splice(i, 1) as [Buffer];
    freeBytes -= b.length;
    return b;
  };
  /** Drops the smallest free buffers until `room` more bytes fit; false when `room` is larger than any remainder. */
  const makeRoom = (room: number, limit = maxFreeBytes()): boolean => {
    while (free.length > 0 && freeBytes + room > limit) {
      let smallest = 0;
      free.forEach((b, i) => {
        if (b.length < free[smallest]!.length) smallest = i;
      });
      if (room > 0 && free[smallest]!.length >= room) return false;
      remove(smallest);
    }
    return freeBytes + room <= limit;
  };
  return {
    take(size) {
      const i = free.findLastIndex((b) => b.length >= size);
      const b = i >= 0 ? remove(i) : Buffer.allocUnsafeSlow(roundedUp(size));
      ours.add(b.buffer);
      makeRoom(0);
      return b;
    },
    give(view) {
      if (!ours.has(view.buffer)) return;
      const whole = Buffer.from(view.buffer);
      if (free.some((b) => b.buffer === whole.buffer)) return;
      if (free.length >= maxFree || !makeRoom(whole.length)) return;
      free.push(whole);
      freeBytes += whole.length;
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

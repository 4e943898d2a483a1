/**
 * Page-sized buffers recycled through a walk: a fresh off-heap body per page lingers until V8 collects, and that
 * garbage drives memory up. A buffer goes back only once what was written from it is flushed.
 */
export interface BufferPool {
  /** A buffer of at least `size` bytes. */
  take(size: number): Buffer;
  /** Returns a buffer (or any view of one) that came from take(); others are ignored. */
  give(view: Buffer): void;
}

/**
 * Keeps at most `maxFree` buffers of at most `maxFreeBytes()` bytes in all (free buffers count against the walk's
 * byte bound), checked on every take and give. The smallest go first: pages that grow never use them again.
 */
export function createBufferPool(maxFree: number, maxFreeBytes = () => Number.POSITIVE_INFINITY): BufferPool {
  const ours = new WeakSet<ArrayBufferLike>();
  const free: Buffer[] = [];
  let freeBytes = 0;
  const remove = (i: number): Buffer => {
    const [b] = free.splice(i, 1) as [Buffer]; // i is an index of free
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

/** Eight steps per power of two: pages of near sizes share buffers, and a page wastes at most an eighth. */
export function roundedUp(size: number): number {
  if (size <= 64 * 1024) return 64 * 1024;
  const step = 2 ** (Math.floor(Math.log2(size)) - 3);
  return Math.ceil(size / step) * step;
}

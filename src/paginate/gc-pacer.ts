/**
 * Keeps a long walk's memory flat. Node's HTTP client reads every socket chunk into a fresh off-heap buffer;
 * each dies as soon as its bytes are copied into the page, but is freed only when V8 next collects the young
 * generation, and V8 schedules that by on-heap allocation, which a walk does little of. Tens of MB of dead
 * chunks then pile up between two collections, and the longer the walk the higher the worst pile: 1M items
 * peaked 35% above 100k. A minor collection after every few MB received frees them while they are few; one
 * over a young generation that is nearly all garbage takes a fraction of a millisecond.
 */
type Gc = (options: { type: 'minor' }) => void;

export interface GcPacer {
  /** Counts bytes received; collects once another `everyBytes` have come in. */
  received(bytes: number): void;
}

export function createGcPacer(everyBytes: number): GcPacer {
  let since = 0;
  let gc: Gc | null | undefined;
  return {
    received(bytes) {
      since += bytes;
      if (since < everyBytes) return;
      since = 0;
      gc ??= exposeGc();
      gc?.({ type: 'minor' });
    },
  };
}

/**
 * V8's gc() without starting Node with --expose-gc: the flag set at run time exposes it in contexts created
 * afterwards (the way test runners reach it). Fetched only once a walk is long enough to need it: a new
 * context costs about a millisecond. Null where that does not work, and the walk just goes on without.
 */
function exposeGc(): Gc | null {
  const exposed = (globalThis as { gc?: Gc }).gc;
  if (typeof exposed === 'function') return exposed;
  try {
    process.getBuiltinModule('node:v8').setFlagsFromString('--expose-gc');
    const gc: unknown = process.getBuiltinModule('node:vm').runInNewContext('gc');
    return typeof gc === 'function' ? (gc as Gc) : null;
  } catch {
    return null;
  }
}

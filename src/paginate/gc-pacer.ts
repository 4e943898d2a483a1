/**
 * Keeps a long walk's memory flat. A walk allocates little on the V8 heap per page (request bookkeeping, page
 * views), so V8 collects the young generation only once it is full, and on a long walk it grows it too: every
 * page of it then gets touched and stays in the process's memory. A minor collection after every few MB of
 * pages keeps the young generation small; one over a young generation that is nearly all garbage takes a
 * fraction of a millisecond.
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

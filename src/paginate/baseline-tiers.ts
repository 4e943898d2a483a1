/**
 * Turns V8's optimising compiler (TurboFan) off for the rest of the process, once a walk starts.
 *
 * Why: TurboFan compiles on worker threads, and the memory those compile jobs take stays with the process.
 * The longer a walk, the more of its functions get hot enough to be compiled, so its peak memory rose with
 * the collection: 1M items peaked 8-9% above 100k with --concurrency 8. Without TurboFan, 1-2% (the same
 * runs with the compiles kept on the main thread, or with one malloc arena, fell in between). The walk's
 * JavaScript is bookkeeping around I/O; the pages are scanned by WebAssembly, which this leaves alone; and
 * the baseline tiers run that bookkeeping as fast: 100k items took the same time, 1M items 10% less.
 * Code already optimised stays so. Where the flag cannot be set the walk just runs as before.
 */
export function keepBaselineTiers(): void {
  try {
    process.getBuiltinModule('node:v8').setFlagsFromString('--no-turbofan');
  } catch {
    // Not fatal: only memory and speed depend on it.
  }
}

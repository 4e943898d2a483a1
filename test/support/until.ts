/** Polls `probe` until it gives a value, or fails after `ms`: a wait with a deadline, never a fixed sleep. */
export async function until<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  ms = 20_000,
  what = 'condition',
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

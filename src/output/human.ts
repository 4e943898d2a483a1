/** Numbers and durations as people read them on a status line. */

/** Thousands separators without Intl: creating a NumberFormat costs ICU start-up time in every `list` run. */
export function group(n: number | bigint | string): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** 870, 8.7k, 87k, 1.2M: three significant figures at most, so the line does not jitter. */
export function compact(n: number): string {
  const units: Array<[number, string]> = [
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  for (const [size, unit] of units) {
    if (n >= size) {
      const v = n / size;
      return `${v < 10 ? (Math.floor(v * 10) / 10).toFixed(1) : Math.floor(v)}${unit}`;
    }
  }
  return String(Math.floor(n));
}

/**
 * The one way idcli shows a span of time. `clock` (7s, 4m05s, 1h02m) keeps a status line that redraws narrow;
 * `words` (59 s, 59 min, 2 h 5 min) is for a line read once, at the precision the reader needs. A countdown rounds
 * up, so it never shows 0s while time is left; elapsed time rounds down.
 */
export function duration(ms: number, round: 'up' | 'down' = 'up', style: 'clock' | 'words' = 'clock'): string {
  const total = Math.max(0, round === 'up' ? Math.ceil(ms / 1000) : Math.floor(ms / 1000));
  const minutes = Math.floor(total / 60);
  const hours = Math.floor(minutes / 60);
  if (style === 'words') {
    if (total < 120) return `${total} s`;
    return minutes < 120 ? `${minutes} min` : `${hours} h ${minutes % 60} min`;
  }
  if (total < 60) return `${total}s`;
  if (minutes < 60) return `${minutes}m${String(total % 60).padStart(2, '0')}s`;
  return `${hours}h${String(minutes % 60).padStart(2, '0')}m`;
}

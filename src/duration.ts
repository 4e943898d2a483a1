/** Spans of time as idcli writes them, in messages and on status lines: one module, so they read alike everywhere. */

/**
 * The one way idcli shows a span: `clock` (4m05s) for a line that redraws, `words` (2 h 5 min) for one read once. A
 * countdown rounds up, so it never shows 0s while time is left; elapsed time rounds down.
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

/** Milliseconds as the seconds a message names, e.g. 1.5: a limit or a deadline, given exactly. */
export function seconds(ms: number): number {
  return Number((ms / 1000).toFixed(3));
}

export interface Progress {
  /** Counts so far; redraws at most every intervalMs. */
  update(pages: number, items: number): void;
  /** The collection's size when known (raw integer text, may exceed 2^53). */
  setTotal(total: string | undefined): void;
  /** Erases the line, e.g. before an error message or at the end. */
  clear(): void;
}

export interface ProgressOptions {
  stream: NodeJS.WritableStream & { columns?: number };
  enabled: boolean;
  now: () => number;
  intervalMs?: number;
}

const CLEAR_LINE = '\r\x1b[2K';
/** Thousands separators without Intl: creating a NumberFormat costs ~20 ms of ICU start-up in every `list` run. */
function group(n: number | bigint | string): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * One self-overwriting status line on stderr (terminal only: on a pipe the bytes would be noise in a
 * log). Plain \r + ANSI "erase line" instead of a spinner library, so `list` loads nothing extra.
 */
export function createProgress(options: ProgressOptions): Progress {
  const { stream, enabled, now } = options;
  const interval = options.intervalMs ?? 100;
  const started = now();
  let lastDraw = -Infinity;
  let drawn = false;
  let total: string | undefined;

  return {
    setTotal(t) {
      total = t;
    },
    update(pages, items) {
      if (!enabled) return;
      const t = now();
      if (t - lastDraw < interval) return;
      lastDraw = t;
      const seconds = (t - started) / 1000;
      const rate = seconds > 0 ? Math.round(items / seconds) : 0;
      const of = total !== undefined ? ` of ${group(total)}` : '';
      let line = `${group(pages)} ${pages === 1 ? 'page' : 'pages'}, ${group(items)}${of} items, ${group(rate)} items/s`;
      // A line wider than the terminal wraps and \r would then only redraw its last row.
      const width = stream.columns;
      if (width !== undefined && width > 1 && line.length >= width) line = line.slice(0, width - 1);
      stream.write(CLEAR_LINE + line);
      drawn = true;
    },
    clear() {
      if (!drawn) return;
      stream.write(CLEAR_LINE);
      drawn = false;
      lastDraw = -Infinity;
    },
  };
}

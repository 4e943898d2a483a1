// One self-overwriting line on a terminal: plain \r and ANSI "erase line" rather than a progress library, so the
// commands that show one load nothing extra.

export interface StatusLine {
  /** The state changed: redraw now, or as soon as the minimum interval since the last draw has passed. */
  invalidate(): void;
  /** Erases the line, e.g. before a message; the next invalidate() draws it again. */
  clear(): void;
  stop(): void;
}

export type TerminalStream = NodeJS.WritableStream & {
  isTTY?: boolean;
  columns?: number;
  on?(event: 'resize', listener: () => void): unknown;
  off?(event: 'resize', listener: () => void): unknown;
};

export interface StatusLineOptions {
  stream: TerminalStream;
  /** The line for a terminal this many columns wide; it must be shorter than that, or it would wrap. */
  render: (columns: number) => string;
  /** Redraw this often even without news, for clocks on the line (elapsed time, a countdown). */
  tickMs?: number;
  now: () => number;
  /** The logger whose messages must erase the line first; it is attached until stop(). */
  messages?: { setStatusLine(line: StatusLine | undefined): void };
}

export const CLEAR = '\r\x1b[2K';
const ERASE_TO_END = '\x1b[K';
const DEFAULT_COLUMNS = 80;
const MIN_INTERVAL_MS = 100;

type Env = Record<string, string | undefined>;

/** A CI variable that is set and not explicitly false, as CI services and `is-ci` read it. */
export function inCi(env: Env): boolean {
  const ci = env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

/** Live lines only on an interactive terminal that can erase a line: not a pipe, not CI, not --quiet, not TERM=dumb. */
export function liveLineWanted(stream: { isTTY?: boolean }, env: Env, quiet: boolean): boolean {
  return stream.isTTY === true && !quiet && !inCi(env) && env.TERM !== 'dumb';
}

export function createStatusLine(options: StatusLineOptions): StatusLine {
  const { stream, render, now } = options;
  let lastDraw = -Infinity;
  let shown: string | undefined;
  let trailing: NodeJS.Timeout | undefined;
  let stopped = false;

  const columns = () => (stream.columns !== undefined && stream.columns > 0 ? stream.columns : DEFAULT_COLUMNS);

  function draw(): void {
    if (trailing !== undefined) clearTimeout(trailing);
    trailing = undefined;
    lastDraw = now();
    const rendered = render(columns());
    const line = rendered === '' ? undefined : rendered;
    // Unchanged text is not written again: a clock ticking faster than its display changes costs nothing.
    if (line === shown) return;
    stream.write(line === undefined ? CLEAR : `\r${line}${ERASE_TO_END}`);
    shown = line;
  }

  function invalidate(): void {
    if (stopped) return;
    const wait = lastDraw + MIN_INTERVAL_MS - now();
    if (wait <= 0) return draw();
    // A trailing draw, so the last change before a quiet spell is shown too.
    // eslint-disable-next-line no-restricted-globals -- the pace of drawing decides nothing, and never holds the exit.
    trailing ??= setTimeout(draw, wait).unref();
  }

  function clear(): void {
    if (shown === undefined) return;
    stream.write(CLEAR);
    shown = undefined;
  }

  // A narrower terminal would wrap the old line, so it is fitted again at once.
  const onResize = () => {
    if (stopped) return;
    clear();
    draw();
  };
  stream.on?.('resize', onResize);
  // eslint-disable-next-line no-restricted-globals -- as the trailing draw: a display's pace, unref'd.
  const ticker = options.tickMs === undefined ? undefined : setInterval(invalidate, options.tickMs).unref();

  const line: StatusLine = {
    invalidate,
    clear,
    stop() {
      if (stopped) return;
      stopped = true;
      options.messages?.setStatusLine(undefined);
      if (trailing !== undefined) clearTimeout(trailing);
      if (ticker !== undefined) clearInterval(ticker);
      stream.off?.('resize', onResize);
      clear();
    },
  };
  options.messages?.setStatusLine(line);
  return line;
}

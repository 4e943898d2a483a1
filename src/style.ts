/**
 * Colour for text meant for people, only on a terminal: messages on stderr, and doctor's report on stdout. NO_COLOR
 * turns it off, FORCE_COLOR on (https://no-color.org). Plain ANSI codes keep start-up free of a colour library.
 */
export interface Style {
  error: (s: string) => string;
  warn: (s: string) => string;
  ok: (s: string) => string;
  dim: (s: string) => string;
  readonly enabled: boolean;
}

export function colourEnabled(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  return stream.isTTY === true && env.TERM !== 'dumb';
}

export function stderrStyle(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): Style {
  const on = colourEnabled(stream, env);
  const wrap = (open: number, close: number) => (s: string) => (on ? `\u001b[${open}m${s}\u001b[${close}m` : s);
  return { enabled: on, error: wrap(31, 39), warn: wrap(33, 39), ok: wrap(32, 39), dim: wrap(2, 22) };
}

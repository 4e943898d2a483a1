// `login`'s countdown to --timeout while the browser is out, erased when the callback arrives.
import { duration } from '../duration.js';
import { createStatusLine, type StatusLine, type StatusLineOptions, type TerminalStream } from './status-line.js';

/** Shorter forms on narrow terminals, '' when none fits. */
export function renderLoginWait(msLeft: number, columns: number): string {
  const left = `${duration(msLeft)} left`;
  const candidates = [
    `Waiting for the sign-in in the browser: ${left} (Ctrl-C to cancel)`,
    `Waiting for the sign-in: ${left} (Ctrl-C to cancel)`,
    `Waiting: ${left} (Ctrl-C cancels)`,
    `Waiting: ${left}`,
    left,
  ];
  return candidates.find((c) => c.length < columns) ?? '';
}

export interface LoginWaitOptions {
  stream: TerminalStream;
  /** When the wait ends by --timeout, on the `now` clock. */
  deadline: number;
  now: () => number;
  messages?: StatusLineOptions['messages'];
}

export function showLoginWait(options: LoginWaitOptions): StatusLine {
  const { deadline, now } = options;
  const line = createStatusLine({
    ...options,
    render: (columns) => renderLoginWait(deadline - now(), columns),
    // Faster than the display changes, so each second is shown close to when it starts; unchanged text is not redrawn.
    tickMs: 200,
  });
  line.invalidate();
  return line;
}

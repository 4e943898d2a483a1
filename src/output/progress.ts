// `list`'s progress on a terminal: a pure rendering of the counts, the clock and the width, in a StatusLine.
import { duration } from '../duration.js';
import { compact, group } from './human.js';
import { createStatusLine, type StatusLineOptions, type TerminalStream } from './status-line.js';

export interface ProgressState {
  pages: number;
  items: number;
  /** totalItems as the server sent it (integer text, may exceed 2^53), when known. */
  total?: string;
  limit?: number;
  elapsedMs: number;
}

export interface BarPaint {
  done(s: string): string;
  todo(s: string): string;
}

const PLAIN: BarPaint = { done: (s) => s, todo: (s) => s };
const MIN_BAR = 10;
const MAX_BAR = 30;
const GAP = '  ';

const plural = (n: number, word: string) => `${group(n)} ${word}${n === 1 ? '' : 's'}`;
const keep = (parts: Array<string | undefined>) => parts.filter((p): p is string => p !== undefined);

/** What the percentage is of: --limit, or totalItems when that is smaller (or there is no limit). */
function target(total: string | undefined, limit: number | undefined): { value: number; text: string } | undefined {
  // Number() of a total beyond 2^53 is approximate, which is plenty for a percentage and an ETA.
  const t = total === undefined ? undefined : Number(total);
  if (limit !== undefined && (t === undefined || !(t < limit))) return { value: limit, text: group(limit) };
  if (total !== undefined && t !== undefined && Number.isFinite(t)) return { value: t, text: group(total) };
  return undefined;
}

function firstFitting(candidates: string[][], room: number): string {
  return candidates.map((parts) => parts.join(GAP)).find((text) => text.length <= room) ?? '';
}

/** Shorter than the width (a full row may wrap); a narrow terminal drops the rate, then the counts, then the bar. */
export function renderProgress(state: ProgressState, columns: number, paint: BarPaint = PLAIN): string {
  const room = columns - 1;
  const seconds = state.elapsedMs / 1000;
  const rate = state.items > 0 && seconds > 0 ? state.items / seconds : undefined;
  const rateText = rate === undefined ? undefined : `${compact(rate)}/s`;
  const of = target(state.total, state.limit);

  if (of === undefined) {
    const items = plural(state.items, 'item');
    const elapsed = `${duration(state.elapsedMs, 'down')} elapsed`;
    return firstFitting(
      [
        keep([items, plural(state.pages, 'page'), rateText, elapsed]),
        keep([items, rateText, elapsed]),
        [items, elapsed],
        [items],
        [group(state.items)],
      ],
      room,
    );
  }

  const fraction = of.value <= 0 ? 1 : Math.min(1, state.items / of.value);
  // Rounded down: 100% only once every item is there.
  const percent = `${Math.floor(fraction * 100)}%`;
  const counts = `${group(state.items)}/${of.text} items`;
  const left = of.value - state.items;
  const eta = rate !== undefined && left > 0 ? `ETA ${duration((left / rate) * 1000)}` : undefined;
  for (const parts of [keep([counts, rateText, eta]), keep([counts, eta]), keep([eta]), []]) {
    // " 5%" and "31%" keep one width, so the text after them does not jump as the percentage grows.
    const text = [percent.padStart(3), ...parts].join(GAP);
    const cells = Math.min(MAX_BAR, room - text.length - 3);
    if (cells >= MIN_BAR) {
      const done = Math.floor(fraction * cells);
      return `[${paint.done('█'.repeat(done))}${paint.todo('░'.repeat(cells - done))}] ${text}`;
    }
  }
  return firstFitting([keep([percent, eta]), [percent]], room);
}

export interface Progress {
  update(pages: number, items: number): void;
  /** Raw integer text, may exceed 2^53. */
  setTotal(total: string | undefined): void;
  stop(): void;
}

export interface ProgressOptions {
  stream: TerminalStream;
  /** A terminal, not --quiet, not CI: see liveLineWanted. */
  enabled: boolean;
  now: () => number;
  limit?: number;
  paint?: BarPaint;
  messages?: StatusLineOptions['messages'];
}

const OFF: Progress = { update() {}, setTotal() {}, stop() {} };

export function createProgress(options: ProgressOptions): Progress {
  if (!options.enabled) return OFF;
  const { now, limit, paint } = options;
  const started = now();
  const state: Omit<ProgressState, 'elapsedMs'> = { pages: 0, items: 0, limit };
  const line = createStatusLine({
    ...options,
    // The tick keeps the elapsed time and the rate moving while a page is slow.
    tickMs: 500,
    render: (columns) => renderProgress({ ...state, elapsedMs: now() - started }, columns, paint),
  });
  return {
    update(pages, items) {
      state.pages = pages;
      state.items = items;
      line.invalidate();
    },
    setTotal(total) {
      state.total = total;
    },
    stop: () => line.stop(),
  };
}

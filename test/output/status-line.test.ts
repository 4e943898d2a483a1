import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createStatusLine, inCi, liveLineWanted } from '../../src/output/status-line.js';
import { screen } from '../support/terminal.js';

describe('liveLineWanted', () => {
  it('only on a terminal, without --quiet, outside CI and not on a dumb terminal', () => {
    const tty = { isTTY: true };
    expect(liveLineWanted(tty, {}, false)).toBe(true);
    expect(liveLineWanted({ isTTY: false }, {}, false)).toBe(false);
    expect(liveLineWanted({}, {}, false)).toBe(false);
    expect(liveLineWanted(tty, {}, true)).toBe(false);
    expect(liveLineWanted(tty, { CI: 'true' }, false)).toBe(false);
    expect(liveLineWanted(tty, { TERM: 'dumb' }, false)).toBe(false);
    expect(liveLineWanted(tty, { TERM: 'xterm-256color', NO_COLOR: '1' }, false)).toBe(true);
  });

  it('reads CI as set unless it is empty or explicitly false', () => {
    expect([undefined, '', '0', 'false', 'FALSE', 'true', '1', 'woodpecker'].map((CI) => inCi({ CI }))).toEqual([
      false,
      false,
      false,
      false,
      false,
      true,
      true,
      true,
    ]);
  });
});

describe('createStatusLine', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function terminal() {
    const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 0 });
    const writes: string[] = [];
    stream.on('data', (c: Buffer) => writes.push(c.toString()));
    return { stream, writes };
  }

  it('assumes 80 columns when the terminal does not say, and writes an unchanged line only once', () => {
    const { stream, writes } = terminal();
    const widths: number[] = [];
    const line = createStatusLine({
      stream,
      now: () => Date.now(),
      render: (columns) => (widths.push(columns), 'same'),
      tickMs: 50,
    });
    line.invalidate();
    vi.advanceTimersByTime(1000);
    expect(widths.length).toBeGreaterThan(5);
    expect(new Set(widths)).toEqual(new Set([80]));
    expect(writes).toEqual(['\rsame\x1b[K']);
    line.stop();
  });

  it('leaves a message and the line on their own rows, and detaches from the logger when stopped', () => {
    const { stream, writes } = terminal();
    const log = createLogger(stream, { verbose: false, quiet: false });
    let n = 0;
    const line = createStatusLine({ stream, now: () => Date.now(), render: () => `step ${++n}`, messages: log });
    line.invalidate();
    log.info('first');
    log.info('second'); // within the interval: drawn again once, after it
    vi.advanceTimersByTime(100);
    expect(screen(writes.join(''))).toEqual(['first', 'second', 'step 2']);
    line.stop();
    log.info('third');
    expect(screen(writes.join(''))).toEqual(['first', 'second', 'third', '']);
  });
});

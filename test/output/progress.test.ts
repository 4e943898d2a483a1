import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { duration, seconds } from '../../src/duration.js';
import { compact, group } from '../../src/output/human.js';
import { createProgress, type ProgressState, renderProgress } from '../../src/output/progress.js';
import { frames, screen } from '../support/terminal.js';

const at = (state: Partial<ProgressState>): ProgressState => ({ pages: 0, items: 0, elapsedMs: 0, ...state });

describe('renderProgress with a known size', () => {
  const midway = at({ pages: 124, items: 62_000, total: '200000', elapsedMs: 7_126 });

  it('draws the bar, the percentage, the counts, the rate and the time left', () => {
    expect(renderProgress(midway, 60)).toBe('[████░░░░░░░░░░] 31%  62,000/200,000 items  8.7k/s  ETA 16s');
  });

  it('stays shorter than the width at every width, giving up the rate, the counts, then the bar', () => {
    for (let columns = 0; columns <= 120; columns++) {
      const line = renderProgress(midway, columns);
      expect(line.length).toBeLessThan(Math.max(columns, 1));
    }
    expect(renderProgress(midway, 200)).toBe(
      `[${'█'.repeat(9)}${'░'.repeat(21)}] 31%  62,000/200,000 items  8.7k/s  ETA 16s`,
    );
    expect(renderProgress(midway, 50)).toBe('[███░░░░░░░░░] 31%  62,000/200,000 items  ETA 16s');
    expect(renderProgress(midway, 30)).toBe('[████░░░░░░░░░░] 31%  ETA 16s');
    expect(renderProgress(midway, 20)).toBe('[████░░░░░░░░░] 31%');
    expect(renderProgress(midway, 15)).toBe('31%  ETA 16s');
    expect(renderProgress(midway, 8)).toBe('31%');
    expect(renderProgress(midway, 3)).toBe('');
  });

  it('rounds the percentage down and fills the bar only when every item is there', () => {
    const almost = renderProgress(at({ pages: 9, items: 999, total: '1000', elapsedMs: 1000 }), 80);
    expect(almost).toMatch(/^\[█{29}░\] 99% {2}999\/1,000 items {2}999\/s {2}ETA 1s$/);
    const done = renderProgress(at({ pages: 10, items: 1000, total: '1000', elapsedMs: 2000 }), 80);
    expect(done).toBe(`[${'█'.repeat(30)}] 100%  1,000/1,000 items  500/s`);
  });

  it('counts the percentage of --limit, or of totalItems when that is smaller', () => {
    const state = at({ pages: 1, items: 100, total: '200000', limit: 400, elapsedMs: 1000 });
    expect(renderProgress(state, 80)).toMatch(/ 25% {2}100\/400 items {2}100\/s {2}ETA 3s$/);
    expect(renderProgress({ ...state, limit: 1_000_000 }, 80)).toMatch(/ 0% {2}100\/200,000 items/);
    // No totalItems: the limit alone gives the walk a size.
    expect(renderProgress({ ...state, total: undefined }, 80)).toMatch(/^\[█{7}░{23}\] 25% {2}100\/400 items/);
  });

  it('keeps a totalItems beyond 2^53 exact in the counts', () => {
    const line = renderProgress(at({ items: 5, total: '123456789012345678901234', elapsedMs: 10 }), 120);
    expect(line).toContain(' 0%  5/123,456,789,012,345,678,901,234 items');
  });

  it('shows no rate and no time left before the first item, and an empty collection as complete', () => {
    expect(renderProgress(at({ total: '500' }), 80)).toBe(`[${'░'.repeat(30)}]  0%  0/500 items`);
    expect(renderProgress(at({ pages: 1, total: '0', elapsedMs: 5 }), 80)).toBe(`[${'█'.repeat(30)}] 100%  0/0 items`);
  });

  it('colours the two parts of the bar only', () => {
    const paint = { done: (s: string) => `<${s}>`, todo: (s: string) => `(${s})` };
    const line = renderProgress(at({ items: 50, total: '100', elapsedMs: 1000 }), 40, paint);
    expect(line).toMatch(/^\[<█+>\(░+\)\] 50% {2}/);
  });
});

describe('renderProgress without a known size', () => {
  it('shows the count, the pages, the rate and the elapsed time, dropping parts on narrow terminals', () => {
    const state = at({ pages: 124, items: 62_000, elapsedMs: 7_126 });
    expect(renderProgress(state, 80)).toBe('62,000 items  124 pages  8.7k/s  7s elapsed');
    expect(renderProgress(state, 40)).toBe('62,000 items  8.7k/s  7s elapsed');
    expect(renderProgress(state, 25)).toBe('62,000 items  7s elapsed');
    expect(renderProgress(state, 14)).toBe('62,000 items');
    expect(renderProgress(state, 8)).toBe('62,000');
    expect(renderProgress(state, 6)).toBe('');
    expect(renderProgress(at({ pages: 1, items: 1, elapsedMs: 61_000 }), 80)).toBe(
      '1 item  1 page  0/s  1m01s elapsed',
    );
  });
});

describe('number and time formats', () => {
  it('groups thousands, shortens rates and writes durations', () => {
    expect(group(1234567)).toBe('1,234,567');
    expect(group('123456789012345678901')).toBe('123,456,789,012,345,678,901');
    expect([0, 999, 1000, 8_749, 87_499, 999_999, 1_250_000, 3e9].map(compact)).toEqual([
      '0',
      '999',
      '1.0k',
      '8.7k',
      '87k',
      '999k',
      '1.2M',
      '3.0G',
    ]);
    expect([0, 1, 999, 1000, 1001, 59_500, 60_000, 3_599_000, 3_600_000, 7_380_000].map((ms) => duration(ms))).toEqual([
      '0s',
      '1s',
      '1s',
      '1s',
      '2s',
      '1m00s',
      '1m00s',
      '59m59s',
      '1h00m',
      '2h03m',
    ]);
    expect(duration(1999, 'down')).toBe('1s');
  });

  it('writes durations in words for a line read once', () => {
    const words = (sec: number) => duration(sec * 1000, 'down', 'words');
    expect([0, 59, 119, 120, 7_199, 7_200, 7_259, 31_536_000].map(words)).toEqual([
      '0 s',
      '59 s',
      '119 s',
      '2 min',
      '119 min',
      '2 h 0 min',
      '2 h 0 min',
      '8760 h 0 min',
    ]);
    expect(duration(119_999, 'down', 'words')).toBe('119 s');
  });

  it('names a limit in seconds exactly, to the millisecond', () => {
    expect([0, 1, 1500, 30_000, 300_000].map(seconds)).toEqual([0, 0.001, 1.5, 30, 300]);
  });
});

describe('createProgress on a terminal stream', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function tty(columns: number) {
    const stream = Object.assign(new PassThrough(), { isTTY: true, columns });
    let raw = '';
    stream.on('data', (c: Buffer) => (raw += c.toString()));
    return { stream, raw: () => raw };
  }

  it('redraws at most ten times a second, shows the last counts after a burst, and erases itself at the end', () => {
    const { stream, raw } = tty(80);
    const p = createProgress({ stream, enabled: true, now: () => Date.now() });
    p.setTotal('1000');
    for (let i = 1; i <= 10; i++) {
      vi.advanceTimersByTime(10);
      p.update(i, i * 10);
    }
    expect(frames(raw())).toHaveLength(1);
    vi.advanceTimersByTime(100);
    const drawn = frames(raw());
    expect(drawn).toHaveLength(2);
    expect(drawn[1]).toMatch(/ 10% {2}100\/1,000 items/);
    p.stop();
    expect(screen(raw())).toEqual(['']);
    // Stopped: no timer draws it again.
    vi.advanceTimersByTime(2000);
    expect(screen(raw())).toEqual(['']);
  });

  it('keeps the clock moving while no page arrives', () => {
    const { stream, raw } = tty(80);
    const p = createProgress({ stream, enabled: true, now: () => Date.now() });
    p.update(1, 10);
    vi.advanceTimersByTime(3000);
    expect(frames(raw()).at(-1)).toBe('10 items  1 page  3/s  3s elapsed');
    p.stop();
  });

  it('is fitted again when the terminal is resized', () => {
    const { stream, raw } = tty(100);
    const p = createProgress({ stream, enabled: true, now: () => Date.now() });
    p.setTotal('200000');
    vi.advanceTimersByTime(1000);
    p.update(10, 5000);
    vi.advanceTimersByTime(100);
    stream.columns = 30;
    stream.emit('resize');
    const [wide, narrow] = frames(raw()).slice(-2);
    expect(wide!.length).toBeGreaterThan(60);
    expect(narrow).toBe('[░░░░░░░░░░░░░░]  2%  ETA 43s');
    p.stop();
    expect(stream.listenerCount('resize')).toBe(0);
  });

  it('erases itself before a message and comes back after it', () => {
    const { stream, raw } = tty(80);
    const { createLogger } = loggerModule;
    const log = createLogger(stream, { verbose: false, quiet: false });
    const p = createProgress({ stream, enabled: true, now: () => Date.now(), messages: log });
    p.update(1, 10);
    log.warn('slow down');
    vi.advanceTimersByTime(100);
    expect(screen(raw())).toEqual(['warning: slow down', '10 items  1 page  100/s  0s elapsed']);
    p.stop();
    log.info('done');
    expect(screen(raw())).toEqual(['warning: slow down', 'done', '']);
  });

  it('writes nothing when disabled (a pipe, CI or --quiet)', () => {
    const { stream, raw } = tty(80);
    const p = createProgress({ stream, enabled: false, now: () => Date.now() });
    p.update(1, 10);
    vi.advanceTimersByTime(5000);
    p.stop();
    expect(raw()).toBe('');
  });
});

const loggerModule = await import('../../src/log.js');

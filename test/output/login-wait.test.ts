import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderLoginWait, showLoginWait } from '../../src/output/login-wait.js';
import { frames, screen } from '../support/terminal.js';

describe('renderLoginWait', () => {
  it('says what it waits for, the time left and how to cancel, shorter on narrow terminals', () => {
    expect(renderLoginWait(299_001, 80)).toBe('Waiting for the sign-in in the browser: 5m00s left (Ctrl-C to cancel)');
    expect(renderLoginWait(299_000, 60)).toBe('Waiting for the sign-in: 4m59s left (Ctrl-C to cancel)');
    expect(renderLoginWait(9_500, 40)).toBe('Waiting: 10s left (Ctrl-C cancels)');
    expect(renderLoginWait(9_500, 30)).toBe('Waiting: 10s left');
    expect(renderLoginWait(1, 8)).toBe('1s left');
    expect(renderLoginWait(1, 3)).toBe('');
    for (let columns = 0; columns <= 100; columns++) {
      expect(renderLoginWait(3_600_000, columns).length).toBeLessThan(Math.max(columns, 1));
    }
  });
});

describe('showLoginWait', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts down each second and erases itself when stopped', () => {
    const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 100 });
    let raw = '';
    stream.on('data', (c: Buffer) => (raw += c.toString()));
    const wait = showLoginWait({ stream, deadline: Date.now() + 3000, now: () => Date.now() });
    vi.advanceTimersByTime(2100);
    expect(frames(raw).map((f) => /(\d+s) left/.exec(f)?.[1])).toEqual(['3s', '2s', '1s']);
    wait.stop();
    expect(screen(raw)).toEqual(['']);
  });
});

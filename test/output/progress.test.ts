import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress } from '../../src/output/progress.js';

function capture() {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c.toString()));
  return { stream, text: () => chunks.join('') };
}

describe('createProgress', () => {
  it('draws one self-overwriting line with pages, items, total and rate, throttled', () => {
    const { stream, text } = capture();
    let now = 0;
    const p = createProgress({ stream, enabled: true, now: () => now, intervalMs: 100 });
    p.setTotal('250000');
    now = 1000;
    p.update(1, 1000);
    now = 1050;
    p.update(2, 2000); // within the interval: not drawn
    now = 2000;
    p.update(3, 3000);
    p.clear();
    expect(text()).toBe(
      '\r\x1b[2K1 page, 1,000 of 250,000 items, 1,000 items/s' +
        '\r\x1b[2K3 pages, 3,000 of 250,000 items, 1,500 items/s' +
        '\r\x1b[2K',
    );
  });

  it('writes nothing when disabled (a pipe or --quiet)', () => {
    const { stream, text } = capture();
    const p = createProgress({ stream, enabled: false, now: () => 5 });
    p.update(1, 10);
    p.clear();
    expect(text()).toBe('');
  });

  it('fits the terminal width', () => {
    const { stream, text } = capture();
    Object.assign(stream, { columns: 20 });
    let now = 0;
    const p = createProgress({ stream, enabled: true, now: () => now });
    now = 1000;
    p.update(12, 123456);
    expect(text().replace('\r\x1b[2K', '').length).toBe(19);
  });
});

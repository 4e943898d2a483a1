import { spawn } from 'node:child_process';
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { IdcliError } from '../../src/errors.js';
import { createPageWriter } from '../../src/output/page-writer.js';

describe('createPageWriter', () => {
  it('waits for drain when the reader is slow (backpressure)', async () => {
    const out = new PassThrough({ highWaterMark: 16 });
    const w = createPageWriter(out);
    const events: string[] = [];
    out.on('drain', () => events.push('drain'));
    const p = w.write(Buffer.alloc(64, 'a')).then((ok) => {
      events.push('resolved');
      return ok;
    });
    expect(out.writableNeedDrain).toBe(true);
    out.resume();
    expect(await p).toBe(true);
    // Resolved by the stream's drain, not before it.
    expect(events).toEqual(['drain', 'resolved']);
  });

  it('tells when the stream is done with a chunk, only after it was consumed', async () => {
    const out = new PassThrough({ highWaterMark: 4 });
    const w = createPageWriter(out);
    let resumed = false;
    const flushedAt: boolean[] = [];
    const p = w.write(Buffer.from('0123456789'), () => flushedAt.push(resumed));
    // The paused stream holds the chunk through a full turn of the event loop: no callback may come yet.
    await new Promise((r) => setImmediate(r));
    expect(flushedAt).toEqual([]);
    resumed = true;
    out.resume();
    await p;
    await new Promise((r) => setImmediate(r));
    expect(flushedAt).toEqual([true]);
    await w.write(Buffer.alloc(0), () => flushedAt.push(resumed));
    expect(flushedAt).toEqual([true, true]);
  });

  it('reports the reader going away (EPIPE) as closed, once, without throwing', async () => {
    let closedCalls = 0;
    const out = new Writable({
      write(_chunk, _enc, cb) {
        cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
      },
    });
    const w = createPageWriter(out, () => closedCalls++);
    await w.write('a\n');
    await new Promise((r) => setImmediate(r));
    expect(w.closed).toBe(true);
    expect(await w.write('b\n')).toBe(false);
    expect(closedCalls).toBe(1);
  });

  it('turns other write errors into an IdcliError', async () => {
    const out = new Writable({
      write(_chunk, _enc, cb) {
        cb(Object.assign(new Error('no space'), { code: 'ENOSPC' }));
      },
    });
    const w = createPageWriter(out);
    await w.write('a\n').catch(() => {});
    await new Promise((r) => setImmediate(r));
    await expect(w.write('b\n')).rejects.toBeInstanceOf(IdcliError);
  });

  it('sees a real pipe closed by its reader', async () => {
    // `head -c 1` exits after one byte; the pipe then answers EPIPE.
    const head = spawn('head', ['-c', '1'], { stdio: ['pipe', 'ignore', 'ignore'] });
    const exited = new Promise((r) => head.on('exit', r));
    const w = createPageWriter(head.stdin);
    expect(await w.write('x')).toBe(true);
    await exited;
    // The kernel reports the closed pipe on a later write: keep writing until it does, within a deadline.
    const deadline = Date.now() + 15_000;
    while (!w.closed && Date.now() < deadline) {
      if (!(await w.write(Buffer.alloc(65536, 'x')))) break;
      await new Promise((r) => setImmediate(r));
    }
    expect(w.closed).toBe(true);
  }, 20_000);
});

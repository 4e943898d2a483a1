import { spawn } from 'node:child_process';
import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { IdcliError } from '../../src/errors.js';
import { createPageWriter } from '../../src/output/page-writer.js';

describe('createPageWriter', () => {
  it('waits for drain when the reader is slow (backpressure)', async () => {
    const out = new PassThrough({ highWaterMark: 16 });
    const w = createPageWriter(out);
    let resolved = false;
    const p = w.write(Buffer.alloc(64, 'a')).then((ok) => {
      resolved = true;
      return ok;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(resolved).toBe(false);
    out.resume();
    expect(await p).toBe(true);
  });

  it('tells when the stream is done with a chunk, only after it was consumed', async () => {
    const out = new PassThrough({ highWaterMark: 4 });
    const w = createPageWriter(out);
    let flushed = 0;
    const p = w.write(Buffer.from('0123456789'), () => flushed++);
    await new Promise((r) => setTimeout(r, 20));
    expect(flushed).toBe(0);
    out.resume();
    await p;
    await new Promise((r) => setImmediate(r));
    expect(flushed).toBe(1);
    await w.write(Buffer.alloc(0), () => flushed++);
    expect(flushed).toBe(2);
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
    let ok = true;
    for (let i = 0; i < 50 && ok; i++) {
      ok = await w.write(Buffer.alloc(65536, 'x'));
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(w.closed).toBe(true);
  }, 20_000);
});

import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';
import { lineChild } from './line-child.js';

it('answers line by line, and fails at once, saying how, when the child has ended', async () => {
  const child = spawn(
    process.execPath,
    ['-e', 'process.stdin.once("data", () => { console.log(JSON.stringify({ ok: 1 })); process.exit(3); })'],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const driven = lineChild(child);
  expect(await driven.ask('first')).toEqual({ ok: 1 });
  await new Promise((resolve) => child.once('close', resolve));
  const started = Date.now();
  await expect(driven.ask('second', 10_000)).rejects.toThrow('the child ended (3) before it answered "second"');
  expect(Date.now() - started).toBeLessThan(5_000);
});

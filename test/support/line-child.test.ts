import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';
import { lineChild } from './line-child.js';
import { until } from './until.js';

it('answers line by line, and fails at once, saying how, when the child has ended', async () => {
  const child = spawn(
    process.execPath,
    ['-e', 'process.stdin.once("data", () => { console.log(JSON.stringify({ ok: 1 })); process.exit(3); })'],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const driven = lineChild(child);
  expect(await driven.ask('first')).toEqual({ ok: 1 });
  await until(() => child.exitCode ?? undefined, 20_000, 'the child to exit');
  // Given all the time of the test, the wait still ends on the child's end: a deadline would say "timed out".
  await expect(driven.ask('second', 50_000)).rejects.toThrow('the child ended (3) before it answered "second"');
});

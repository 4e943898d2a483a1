/**
 * A child process driven over its stdin, one line of command for one line of JSON answer on its stdout. A child that
 * ends before it answers fails the wait at once, saying how it ended, rather than at the deadline.
 */
import type { ChildProcess } from 'node:child_process';
import { until } from './until.js';

export interface LineChild {
  /** The child's answer to one command, as JSON. */
  ask(command: string, ms?: number): Promise<unknown>;
}

export function lineChild(child: ChildProcess): LineChild {
  const answers: string[] = [];
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    const lines = out.split('\n');
    out = lines.pop()!;
    answers.push(...lines);
  });
  // A write to a child that has ended fails with EPIPE; the wait below says how the child ended instead.
  child.stdin!.on('error', () => {});
  return {
    async ask(command, ms = 20_000) {
      child.stdin!.write(`${command}\n`);
      const line = await until(
        () => {
          if (answers.length > 0) return answers.shift();
          const ended = child.exitCode ?? child.signalCode;
          if (ended !== null) throw new Error(`the child ended (${ended}) before it answered "${command}"`);
          return undefined;
        },
        ms,
        `the answer to "${command}"`,
      );
      return JSON.parse(line) as unknown;
    },
  };
}

/**
 * Runs a shell command on a pseudo-terminal of a chosen width (util-linux `script`), the way a person's terminal
 * runs it: stderr (and stdout, unless redirected) are the terminal, and `raw` is every byte the terminal received.
 */
import { spawn } from 'node:child_process';

export interface TerminalRun {
  code: number | null;
  /** What the terminal received, escape sequences included; the line discipline turns \n into \r\n. */
  raw: string;
}

export interface TerminalOptions {
  env: Record<string, string | undefined>;
  columns?: number;
  /** Sees the output as it arrives, e.g. to act when a line appears. */
  onOutput?: (rawSoFar: string) => void;
  /**
   * Keeps the terminal's input open and hands over the keyboard: `type` sends keys as a person types them.
   * Without it the program reads end-of-file at once, as if the person pressed Ctrl-D.
   */
  keyboard?: (type: (keys: string) => void) => void;
  timeoutMs?: number;
}

export function onTerminal(command: string, opts: TerminalOptions): Promise<TerminalRun> {
  const env = Object.fromEntries(
    Object.entries({ TERM: 'xterm', ...opts.env, SHELL: '/bin/sh' }).filter(([, v]) => v !== undefined),
  ) as NodeJS.ProcessEnv;
  // Without a terminal of its own `script` makes a 0x0 one; stty gives it the width under test.
  const script = `stty cols ${opts.columns ?? 100} rows 24; ${command}`;
  return new Promise((resolve, reject) => {
    const input = opts.keyboard ? 'pipe' : 'ignore';
    const child = spawn('script', ['-qfec', script, '/dev/null'], { env, stdio: [input, 'pipe', 'pipe'] });
    // Keys typed after the program ended have nowhere to go; that is not the test's failure.
    child.stdin?.on('error', () => {});
    opts.keyboard?.((keys) => void child.stdin?.write(keys));
    let raw = '';
    child.stdout!.on('data', (b: Buffer) => {
      raw += b.toString('utf8');
      opts.onOutput?.(raw);
    });
    child.stderr!.on('data', (b: Buffer) => {
      raw += b.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      child.stdin?.destroy();
      resolve({ code, raw });
    });
  });
}

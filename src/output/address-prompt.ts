/** `login`'s question for the address a remote browser ended on, in line mode so Ctrl-C stays a signal. */
import { createInterface } from 'node:readline';
import { CLEAR, type TerminalStream } from './status-line.js';

export interface AddressPromptOptions {
  input: NodeJS.ReadableStream;
  output: TerminalStream;
  question: string;
  /** Whether the output can erase a row; else a row is ended instead. */
  erase: boolean;
  /** Undefined when the line was taken, else why not (said to the user before asking again). */
  take: (line: string) => string | undefined;
  /** The logger whose messages erase the question first and ask it again. */
  messages?: { setStatusLine(line: { clear(): void; invalidate(): void } | undefined): void };
}

export interface AddressPrompt {
  /** Stop asking: the question goes from the screen and the input is released, so the process can end. */
  stop(): void;
}

export function askForAddress(o: AddressPromptOptions): AddressPrompt {
  const { output } = o;
  // On a terminal the question waits on its own row for the answer; written to a file it is a whole line.
  const inline = output.isTTY === true;
  let open = false;
  let cleared = false;
  let stopped = false;
  const ask = () => {
    output.write(inline ? `${o.question} ` : `${o.question}\n`);
    open = inline;
  };
  const endRow = (end = o.erase ? CLEAR : '\n') => {
    if (open) output.write(end);
    open = false;
  };
  // A message that comes while the question waits (a --verbose trace, a browser warning) takes its row, then the
  // question is asked again below it.
  const row = {
    clear() {
      if (!open) return;
      endRow();
      cleared = true;
    },
    invalidate() {
      if (!cleared || stopped) return;
      cleared = false;
      ask();
    },
  };
  const lines = createInterface({ input: o.input, terminal: false, crlfDelay: Infinity });
  lines.on('line', (typed) => {
    if (stopped) return;
    open = false; // the Enter key moved the cursor to a new row
    const line = typed.replace(PASTE_MARKERS, '');
    if (line.trim() === '') return ask();
    const refusal = o.take(line);
    if (refusal === undefined) return stop();
    output.write(`${refusal.charAt(0).toUpperCase()}${refusal.slice(1)}.\n`);
    ask();
  });
  // End of input (Ctrl-D): nothing more can be pasted, and the listener keeps waiting for the browser.
  lines.on('close', () => stop('\n'));
  function stop(rowEnd?: string): void {
    if (stopped) return;
    stopped = true;
    o.messages?.setStatusLine(undefined);
    endRow(rowEnd);
    lines.close();
  }
  o.messages?.setStatusLine(row);
  ask();
  return { stop };
}

/** A terminal left in bracketed-paste mode wraps what is pasted in ESC[200~ … ESC[201~, which line mode keeps. */
const PASTE_MARKERS = /\u001b\[20[01]~/g;

import { printable } from './printable.js';
import { redactLine } from './redact.js';

/** Messages go to stderr so stdout stays data only (the CLI contract's stream rule). */
export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  verbose(msg: string): void;
  addSecret(value: string | undefined): void;
  /** `text` redacted as the logger's lines are (redactLine), for a line written without it (the error line). */
  readonly redact: (text: string) => string;
  /** A live line (progress) below the messages, erased before each message and drawn again after; undefined detaches. */
  setStatusLine(line: { clear(): void; invalidate(): void } | undefined): void;
  readonly isVerbose: boolean;
  readonly isQuiet: boolean;
}

export interface LoggerOptions {
  verbose: boolean;
  quiet: boolean;
  /** Decorates the "warning:" prefix, e.g. with colour on a terminal. */
  warnPrefix?: string;
}

export function createLogger(stderr: Pick<NodeJS.WritableStream, 'write'>, opts: LoggerOptions): Logger {
  const secrets = new Set<string>();
  let status: { clear(): void; invalidate(): void } | undefined;
  const write = (line: string, prefix = '') => {
    status?.clear();
    stderr.write(`${prefix}${printable(redactLine(line, secrets))}\n`);
    status?.invalidate();
  };
  return {
    isVerbose: opts.verbose,
    isQuiet: opts.quiet,
    info(msg) {
      if (!opts.quiet) write(msg);
    },
    warn(msg) {
      // The prefix may be coloured (ANSI): it is ours, so it is kept out of the control-character filter.
      write(msg, `${opts.warnPrefix ?? 'warning:'} `);
    },
    verbose(msg) {
      if (opts.verbose) write(`* ${msg}`);
    },
    addSecret(value) {
      if (value) secrets.add(value);
    },
    redact: (text) => redactLine(text, secrets),
    setStatusLine(line) {
      status = line;
    },
  };
}

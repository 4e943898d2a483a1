import { printable } from './printable.js';
import { redactValues } from './redact.js';

/** Messages go to stderr so stdout stays data only (the CLI contract's stream rule). */
export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  verbose(msg: string): void;
  addSecret(value: string | undefined): void;
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
  const write = (line: string, prefix = '') => {
    stderr.write(`${prefix}${printable(redactValues(line, secrets))}\n`);
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
  };
}

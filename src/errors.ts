import { errReason } from './shape.js';
/**
 * The one error type that reaches the user. Its message is a single line that says what went wrong and, through
 * `hint`, what to do next. Messages never carry secrets or raw response bodies.
 */
export const ExitCode = {
  OK: 0,
  INTERNAL: 1,
  USAGE: 2,
  AUTH: 3,
  NETWORK: 4,
  CONTRACT: 5,
  /** SIGHUP, handled like SIGINT (128 + the signal's number, as shells report it). */
  HANGUP: 129,
  INTERRUPTED: 130,
  /** SIGTERM (what CI runners send on cancel or time-out), handled like SIGINT. */
  TERMINATED: 143,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export interface IdcliErrorOptions {
  hint?: string;
  cause?: unknown;
  /** The RFC 6749 error code when the failure came from the authorization server. */
  oauthError?: string;
  /** The HTTP status the server refused the request with, when that is the failure. */
  status?: number;
}

export class IdcliError extends Error {
  readonly exitCode: ExitCodeValue;
  readonly hint?: string;
  readonly oauthError?: string;
  readonly status?: number;

  constructor(message: string, exitCode: ExitCodeValue, options: IdcliErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'IdcliError';
    this.exitCode = exitCode;
    if (options.hint !== undefined) this.hint = options.hint;
    if (options.oauthError !== undefined) this.oauthError = options.oauthError;
    if (options.status !== undefined) this.status = options.status;
  }
}

export function usageError(message: string, hint?: string): IdcliError {
  return new IdcliError(message, ExitCode.USAGE, hint === undefined ? {} : { hint });
}

export function notLoggedIn(detail = 'not logged in'): IdcliError {
  return new IdcliError(detail, ExitCode.AUTH, { hint: 'run `idcli login`' });
}

/**
 * stdout could not be written (a full disk, an I/O error): a failure, never a success (docs/cli.md, "Streams").
 * A reader that went away (EPIPE) is not this: that ends the run quietly with exit 0.
 */
export class OutputError extends IdcliError {
  constructor(cause: unknown) {
    super(`cannot write the output (${errReason(cause)})`, ExitCode.INTERNAL, {
      hint: 'check the disk or the file it goes to',
      cause,
    });
    this.name = 'OutputError';
  }
}

export function outputError(cause: unknown): OutputError {
  return new OutputError(cause);
}

/** The run was stopped by a signal (Ctrl-C, SIGTERM, SIGHUP) before it finished. */
export function interrupted(): IdcliError {
  return new IdcliError('interrupted', ExitCode.INTERRUPTED);
}

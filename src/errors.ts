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
  /** `exec`: the command cannot be run, or was not found (as shells report them, POSIX "Command Search"). */
  COMMAND_NOT_RUNNABLE: 126,
  COMMAND_NOT_FOUND: 127,
  /** SIGHUP, handled like SIGINT (128 + the signal's number, as shells report it). */
  HANGUP: 129,
  INTERRUPTED: 130,
  /** SIGTERM (what CI runners send on cancel or time-out), handled like SIGINT. */
  TERMINATED: 143,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/**
 * What failed, as a stable word for programs and tests (docs/architecture.md, "Errors"): one per kind of failure,
 * whatever the wording of the message. A code is never renamed or reused for another kind.
 */
export const ERROR_CODES = [
  ...['USAGE_UNKNOWN_COMMAND', 'USAGE_SUBCOMMAND_MISSING', 'USAGE_UNKNOWN_OPTION', 'USAGE_OPTION_MISPLACED'],
  ...['USAGE_OPTION_TAKES_NO_VALUE', 'USAGE_OPTION_VALUE_MISSING', 'USAGE_CONFLICTING_OPTIONS'],
  ...['USAGE_ARGUMENT_MISSING', 'USAGE_UNEXPECTED_ARGUMENT', 'USAGE_INVALID_CHOICE', 'USAGE_NOT_A_NUMBER'],
  ...['USAGE_NUMBER_OUT_OF_RANGE'],
  ...['SETTING_INVALID', 'SETTING_MISSING', 'CONFIG_UNKNOWN_KEY', 'CONFIG_DIR_UNKNOWN', 'CONFIG_FILE_INVALID'],
  ...['CONFIG_FILE_TOO_LARGE', 'PROXY_URL_INVALID'],
  ...['API_BASE_URL_MISSING', 'API_BASE_URL_INVALID', 'TARGET_MISSING', 'TARGET_INVALID', 'TARGET_CROSS_ORIGIN'],
  ...['API_METHOD_INVALID', 'API_METHOD_REFUSED', 'API_FIELD_INVALID', 'API_FIELD_REPEATED', 'API_HEADER_INVALID'],
  ...['API_HEADER_REFUSED', 'API_BODY_UNREADABLE', 'API_BODY_CHANGED', 'API_BODY_TIMED_OUT'],
  ...['PAGE_SIZE_ZERO', 'PAGE_SIZE_REFUSED', 'OUTPUT_NAME_MISSING', 'OUTPUT_NAME_IS_DIRECTORY', 'OUTPUT_NAME_TOO_LONG'],
  ...['OUTPUT_CLAIMED', 'OUTPUT_CLAIM_FOREIGN', 'OUTPUT_NOT_WRITTEN', 'RESUME_STATE_UNUSABLE'],
  ...['RESUME_STATE_UNREADABLE', 'RESUME_OTHER_WALK', 'RESUME_OTHER_ORIGIN', 'RESUME_OVER_LIMIT', 'RESUME_FILE_GONE'],
  ...['RESUME_FILE_CHANGED', 'OUTPUT_HARD_LINKED'],
  ...['SYMLINK_REFUSED', 'PATH_NOT_REGULAR', 'PATH_FOREIGN_OWNER', 'PATH_UNSAFE_DIRECTORY', 'PATH_UNSAFE_LINK'],
  ...['PATH_TOO_MANY_LINKS', 'PATH_IN_THE_WAY', 'FS_REFUSED', 'FS_FAILED', 'LOCK_TIMED_OUT'],
  ...['LOCK_LOST'],
  ...['KEYCHAIN_UNAVAILABLE', 'KEYCHAIN_WRITE_FAILED', 'CREDENTIALS_UNREADABLE'],
  ...['ETCD_UNAVAILABLE', 'ETCD_AUTH_FAILED', 'ETCD_PERMISSION_DENIED', 'ETCD_REFUSED', 'ETCD_FILE_UNREADABLE'],
  ...['ETCD_LOCK_TIMED_OUT', 'ETCD_LOCK_LOST', 'ETCD_TLS_FAILED', 'ETCD_REFRESH_UNSTORED'],
  ...['ETCD_LOCK_FOREIGN'],
  ...['NOT_LOGGED_IN', 'SIGN_IN_REJECTED', 'REFRESH_TOKEN_MISSING', 'PKCE_VERIFIER_MISSING'],
  ...['SIGN_IN_CALLBACK_INVALID', 'SIGN_IN_NO_SESSION', 'SIGN_IN_DENIED', 'SIGN_IN_REFUSED', 'SIGN_IN_TIMED_OUT'],
  ...['SIGN_IN_LOCK_TIMED_OUT', 'CALLBACK_NO_LOOPBACK', 'CALLBACK_PORT_IN_USE', 'CALLBACK_PORT_FORBIDDEN'],
  ...['CALLBACK_LISTEN_FAILED', 'ENV_TOKEN_EXPIRED', 'ENV_TOKEN_BELOW_MIN_TTL', 'ENV_TOKEN_EXPIRY_UNKNOWN'],
  ...['ENV_TOKEN_REJECTED', 'OAUTH_INVALID_GRANT', 'OAUTH_CLIENT_REFUSED', 'OAUTH_REQUEST_REFUSED', 'API_UNAUTHORIZED'],
  ...['API_UNAUTHORIZED_UNREPEATED', 'API_REDIRECT', 'API_STATUS'],
  ...['NETWORK_REQUEST_FAILED', 'NETWORK_TOKEN_REQUEST_FAILED', 'NETWORK_TOKEN_ENDPOINT_STATUS'],
  ...['CONTRACT_TOKEN_REDIRECT', 'CONTRACT_TOKEN_EMPTY_BODY', 'CONTRACT_TOKEN_NOT_JSON'],
  ...['CONTRACT_TOKEN_MALFORMED_JSON', 'CONTRACT_TOKEN_NOT_AN_OBJECT', 'CONTRACT_TOKEN_FIELD_MISSING'],
  ...['CONTRACT_TOKEN_FIELD_INVALID', 'CONTRACT_MALFORMED_PAGE', 'CONTRACT_NEXT_LINK_INVALID'],
  ...['CONTRACT_NEXT_LINK_CROSS_ORIGIN', 'CONTRACT_PAGINATION_LOOP', 'CONTRACT_NO_TOTAL_ITEMS'],
  ...['CONTRACT_CODING_UNASKED', 'CONTRACT_TOO_MANY_CODINGS', 'DOCTOR_CHECKS_FAILED', 'INTERRUPTED'],
  ...['EXEC_ENV_NAME_INVALID', 'EXEC_COMMAND_NOT_FOUND', 'EXEC_COMMAND_NOT_RUNNABLE', 'KUBE_EXEC_INFO_INVALID'],
  ...['ID_TOKEN_MISSING'],
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface IdcliErrorOptions {
  hint?: string;
  cause?: unknown;
  /** The RFC 6749 error code when the failure came from the authorization server. */
  oauthError?: string;
  /** The HTTP status the server refused the request with, when that is the failure. */
  status?: number;
}

export class IdcliError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: ExitCodeValue;
  readonly hint?: string;
  readonly oauthError?: string;
  readonly status?: number;

  constructor(code: ErrorCode, message: string, exitCode: ExitCodeValue, options: IdcliErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'IdcliError';
    this.code = code;
    this.exitCode = exitCode;
    if (options.hint !== undefined) this.hint = options.hint;
    if (options.oauthError !== undefined) this.oauthError = options.oauthError;
    if (options.status !== undefined) this.status = options.status;
  }
}

export function usageError(code: ErrorCode, message: string, hint?: string): IdcliError {
  return new IdcliError(code, message, ExitCode.USAGE, hint === undefined ? {} : { hint });
}

export function notLoggedIn(code: ErrorCode = 'NOT_LOGGED_IN', detail = 'not logged in'): IdcliError {
  return new IdcliError(code, detail, ExitCode.AUTH, { hint: 'run `idcli login`' });
}

/** The server refused the stored refresh token: every run that meets this sign-in says so in the same words. */
export function signInRejected(): IdcliError {
  return notLoggedIn('SIGN_IN_REJECTED', 'the stored sign-in was rejected by the server (invalid_grant)');
}

/**
 * A run's lock was taken from it while it held it (deleted by hand, or judged stale where its owner could not be
 * checked): what it was about to commit is not committed, and `consequence` says what that leaves behind.
 */
export function lockLost(lockPath: string, exitCode: ExitCodeValue, consequence: string, hint: string): IdcliError {
  const message = `another process took the lock ${lockPath} while this run held it, so ${consequence}`;
  return new IdcliError('LOCK_LOST', message, exitCode, { hint });
}

/** stdout could not be written (a full disk): a failure, unlike a reader gone (EPIPE, exit 0; docs/cli.md, "Streams"). */
export class OutputError extends IdcliError {
  constructor(cause: unknown) {
    super('OUTPUT_NOT_WRITTEN', `cannot write the output (${errReason(cause)})`, ExitCode.INTERNAL, {
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
  return new IdcliError('INTERRUPTED', 'interrupted', ExitCode.INTERRUPTED);
}

/**
 * The run ends with this status and says nothing more: `idcli exec` hands on the exit status of the command it ran,
 * which has spoken for itself on its own stderr.
 */
export class ExitStatus extends Error {
  constructor(readonly status: number) {
    super(`exit status ${status}`);
    this.name = 'ExitStatus';
  }
}

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

/**
 * What failed, as a stable word for programs and tests (docs/architecture.md, "Errors"): one per kind of failure,
 * whatever the wording of the message. A code is never renamed or reused for another kind.
 */
export const ErrorCode = {
  USAGE_UNKNOWN_COMMAND: 'USAGE_UNKNOWN_COMMAND',
  USAGE_SUBCOMMAND_MISSING: 'USAGE_SUBCOMMAND_MISSING',
  USAGE_UNKNOWN_OPTION: 'USAGE_UNKNOWN_OPTION',
  USAGE_OPTION_MISPLACED: 'USAGE_OPTION_MISPLACED', // A command's option given before its command.
  USAGE_OPTION_TAKES_NO_VALUE: 'USAGE_OPTION_TAKES_NO_VALUE',
  USAGE_OPTION_VALUE_MISSING: 'USAGE_OPTION_VALUE_MISSING',
  USAGE_CONFLICTING_OPTIONS: 'USAGE_CONFLICTING_OPTIONS',
  USAGE_ARGUMENT_MISSING: 'USAGE_ARGUMENT_MISSING',
  USAGE_UNEXPECTED_ARGUMENT: 'USAGE_UNEXPECTED_ARGUMENT',
  USAGE_INVALID_CHOICE: 'USAGE_INVALID_CHOICE', // A value outside an option's or argument's list of choices.
  USAGE_NOT_A_NUMBER: 'USAGE_NOT_A_NUMBER',
  USAGE_NUMBER_OUT_OF_RANGE: 'USAGE_NUMBER_OUT_OF_RANGE',
  SETTING_INVALID: 'SETTING_INVALID', // A setting's value (flag, variable or config key) that its row refuses.
  SETTING_MISSING: 'SETTING_MISSING', // A setting the command needs and nothing gives.
  CONFIG_UNKNOWN_KEY: 'CONFIG_UNKNOWN_KEY',
  CONFIG_DIR_UNKNOWN: 'CONFIG_DIR_UNKNOWN', // Neither IDCLI_CONFIG_DIR nor a usable home directory.
  CONFIG_FILE_INVALID: 'CONFIG_FILE_INVALID', // config.json is not JSON or not of the shape idcli writes.
  CONFIG_FILE_TOO_LARGE: 'CONFIG_FILE_TOO_LARGE',
  PROXY_URL_INVALID: 'PROXY_URL_INVALID',
  API_BASE_URL_MISSING: 'API_BASE_URL_MISSING',
  API_BASE_URL_INVALID: 'API_BASE_URL_INVALID',
  TARGET_MISSING: 'TARGET_MISSING', // The command was given no path or URL to send the request to.
  TARGET_INVALID: 'TARGET_INVALID',
  TARGET_CROSS_ORIGIN: 'TARGET_CROSS_ORIGIN', // Outside the API's origin, where the token is not sent.
  API_METHOD_INVALID: 'API_METHOD_INVALID',
  API_METHOD_REFUSED: 'API_METHOD_REFUSED',
  API_FIELD_INVALID: 'API_FIELD_INVALID',
  API_FIELD_REPEATED: 'API_FIELD_REPEATED',
  API_HEADER_INVALID: 'API_HEADER_INVALID',
  API_HEADER_REFUSED: 'API_HEADER_REFUSED', // A header field idcli sets itself (Authorization among them).
  API_BODY_UNREADABLE: 'API_BODY_UNREADABLE',
  API_BODY_CHANGED: 'API_BODY_CHANGED',
  API_BODY_TIMED_OUT: 'API_BODY_TIMED_OUT',
  PAGE_SIZE_ZERO: 'PAGE_SIZE_ZERO', // A page size of 0, which never reaches the end of a collection.
  PAGE_SIZE_REFUSED: 'PAGE_SIZE_REFUSED', // The service refused the first page at the page size idcli chose.
  OUTPUT_NAME_MISSING: 'OUTPUT_NAME_MISSING',
  OUTPUT_NAME_IS_DIRECTORY: 'OUTPUT_NAME_IS_DIRECTORY',
  OUTPUT_NAME_TOO_LONG: 'OUTPUT_NAME_TOO_LONG', // The -o name leaves no room for the files idcli keeps beside it.
  OUTPUT_CLAIMED: 'OUTPUT_CLAIMED', // Another idcli run writes, or is claiming, the same -o file.
  OUTPUT_CLAIM_FOREIGN: 'OUTPUT_CLAIM_FOREIGN', // Something not idcli's where an -o file's claim goes.
  OUTPUT_NOT_WRITTEN: 'OUTPUT_NOT_WRITTEN', // stdout or the -o file could not be written.
  RESUME_STATE_UNUSABLE: 'RESUME_STATE_UNUSABLE',
  RESUME_STATE_UNREADABLE: 'RESUME_STATE_UNREADABLE',
  RESUME_OTHER_WALK: 'RESUME_OTHER_WALK', // The -o file holds part of a walk of another command line.
  RESUME_OTHER_ORIGIN: 'RESUME_OTHER_ORIGIN',
  RESUME_OVER_LIMIT: 'RESUME_OVER_LIMIT',
  RESUME_FILE_GONE: 'RESUME_FILE_GONE',
  RESUME_FILE_CHANGED: 'RESUME_FILE_CHANGED', // The -o file is not what its state says was written.
  SYMLINK_REFUSED: 'SYMLINK_REFUSED',
  PATH_NOT_REGULAR: 'PATH_NOT_REGULAR', // A FIFO, a directory or a device where a regular file is needed.
  PATH_FOREIGN_OWNER: 'PATH_FOREIGN_OWNER',
  PATH_UNSAFE_DIRECTORY: 'PATH_UNSAFE_DIRECTORY', // In a directory others may write.
  PATH_UNSAFE_LINK: 'PATH_UNSAFE_LINK',
  PATH_TOO_MANY_LINKS: 'PATH_TOO_MANY_LINKS',
  PATH_IN_THE_WAY: 'PATH_IN_THE_WAY', // Something idcli cannot remove sits where it keeps a file.
  FS_REFUSED: 'FS_REFUSED', // A file operation the user can mend (permissions, space).
  FS_FAILED: 'FS_FAILED',
  LOCK_TIMED_OUT: 'LOCK_TIMED_OUT',
  KEYCHAIN_UNAVAILABLE: 'KEYCHAIN_UNAVAILABLE',
  KEYCHAIN_WRITE_FAILED: 'KEYCHAIN_WRITE_FAILED',
  CREDENTIALS_UNREADABLE: 'CREDENTIALS_UNREADABLE',
  NOT_LOGGED_IN: 'NOT_LOGGED_IN',
  SIGN_IN_REJECTED: 'SIGN_IN_REJECTED', // The refresh got invalid_grant; the sign-in was removed.
  REFRESH_TOKEN_MISSING: 'REFRESH_TOKEN_MISSING',
  PKCE_VERIFIER_MISSING: 'PKCE_VERIFIER_MISSING',
  SIGN_IN_CALLBACK_INVALID: 'SIGN_IN_CALLBACK_INVALID', // Not this sign-in's redirect (state, issuer).
  SIGN_IN_NO_SESSION: 'SIGN_IN_NO_SESSION', // prompt=none found no session (login_required and the like).
  SIGN_IN_DENIED: 'SIGN_IN_DENIED',
  SIGN_IN_REFUSED: 'SIGN_IN_REFUSED', // The authorization server sent any other error to the callback.
  SIGN_IN_TIMED_OUT: 'SIGN_IN_TIMED_OUT',
  SIGN_IN_LOCK_TIMED_OUT: 'SIGN_IN_LOCK_TIMED_OUT', // Timed out waiting for another idcli's lock.
  CALLBACK_NO_LOOPBACK: 'CALLBACK_NO_LOOPBACK',
  CALLBACK_PORT_IN_USE: 'CALLBACK_PORT_IN_USE',
  CALLBACK_PORT_FORBIDDEN: 'CALLBACK_PORT_FORBIDDEN',
  CALLBACK_LISTEN_FAILED: 'CALLBACK_LISTEN_FAILED',
  ENV_TOKEN_EXPIRED: 'ENV_TOKEN_EXPIRED',
  ENV_TOKEN_BELOW_MIN_TTL: 'ENV_TOKEN_BELOW_MIN_TTL', // IDCLI_ACCESS_TOKEN lives shorter than --min-ttl.
  ENV_TOKEN_EXPIRY_UNKNOWN: 'ENV_TOKEN_EXPIRY_UNKNOWN', // So --min-ttl cannot be checked.
  ENV_TOKEN_REJECTED: 'ENV_TOKEN_REJECTED', // The API refused IDCLI_ACCESS_TOKEN, which idcli cannot refresh.
  OAUTH_INVALID_GRANT: 'OAUTH_INVALID_GRANT',
  OAUTH_CLIENT_REFUSED: 'OAUTH_CLIENT_REFUSED', // invalid_client or unauthorized_client: idcli's client settings.
  OAUTH_REQUEST_REFUSED: 'OAUTH_REQUEST_REFUSED', // Any other RFC 6749 error from the token endpoint.
  API_UNAUTHORIZED: 'API_UNAUTHORIZED', // The API answered 401 even after a refresh.
  API_UNAUTHORIZED_UNREPEATED: 'API_UNAUTHORIZED_UNREPEATED', // A 401 to a body that cannot be sent again.
  API_REDIRECT: 'API_REDIRECT',
  API_STATUS: 'API_STATUS', // The API answered an error status (its number is the error's `status`).
  NETWORK_REQUEST_FAILED: 'NETWORK_REQUEST_FAILED', // No response arrived (refused, reset, timed out, a DNS failure).
  NETWORK_TOKEN_REQUEST_FAILED: 'NETWORK_TOKEN_REQUEST_FAILED',
  NETWORK_TOKEN_ENDPOINT_STATUS: 'NETWORK_TOKEN_ENDPOINT_STATUS', // An error status without an RFC 6749 error.
  CONTRACT_TOKEN_REDIRECT: 'CONTRACT_TOKEN_REDIRECT',
  CONTRACT_TOKEN_EMPTY_BODY: 'CONTRACT_TOKEN_EMPTY_BODY',
  CONTRACT_TOKEN_NOT_JSON: 'CONTRACT_TOKEN_NOT_JSON', // A token response of another content type than JSON.
  CONTRACT_TOKEN_MALFORMED_JSON: 'CONTRACT_TOKEN_MALFORMED_JSON',
  CONTRACT_TOKEN_NOT_AN_OBJECT: 'CONTRACT_TOKEN_NOT_AN_OBJECT',
  CONTRACT_TOKEN_FIELD_MISSING: 'CONTRACT_TOKEN_FIELD_MISSING',
  CONTRACT_TOKEN_FIELD_INVALID: 'CONTRACT_TOKEN_FIELD_INVALID',
  CONTRACT_MALFORMED_PAGE: 'CONTRACT_MALFORMED_PAGE', // Not the envelope docs/cli.md describes.
  CONTRACT_NEXT_LINK_INVALID: 'CONTRACT_NEXT_LINK_INVALID',
  CONTRACT_NEXT_LINK_CROSS_ORIGIN: 'CONTRACT_NEXT_LINK_CROSS_ORIGIN',
  CONTRACT_PAGINATION_LOOP: 'CONTRACT_PAGINATION_LOOP',
  CONTRACT_NO_TOTAL_ITEMS: 'CONTRACT_NO_TOTAL_ITEMS', // --count on a collection whose pages do not report totalItems.
  CONTRACT_CODING_UNASKED: 'CONTRACT_CODING_UNASKED', // A content coding idcli did not ask for.
  CONTRACT_TOO_MANY_CODINGS: 'CONTRACT_TOO_MANY_CODINGS',
  DOCTOR_CHECKS_FAILED: 'DOCTOR_CHECKS_FAILED', // `idcli doctor` found failed checks.
  INTERRUPTED: 'INTERRUPTED', // A signal (Ctrl-C, SIGTERM, SIGHUP) stopped the run.
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

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

/**
 * stdout could not be written (a full disk, an I/O error): a failure, never a success (docs/cli.md, "Streams").
 * A reader that went away (EPIPE) is not this: that ends the run quietly with exit 0.
 */
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

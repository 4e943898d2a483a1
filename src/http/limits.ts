// A broken or hostile server must end in a bounded time with a bounded amount of memory, never in a hang.
import { seconds } from '../duration.js';
import { NetworkError } from './types.js';

/** No byte received for this long fails the attempt: a connection gone silent. */
export const IDLE_TIMEOUT_MS = 30_000;
/** A page this big is a broken server; a compressed body is counted as received and as decoded (zip bombs). */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** A read-once request body (stdin, a pipe) is kept in memory for a second attempt up to this size. */
export const MAX_REPLAY_BYTES = MAX_BODY_BYTES;
/** A gzip header running past this (extra field allows 64 KiB) would be read by zlib without end or output. */
export const MAX_GZIP_HEADER_BYTES = 128 * 1024;
/** gzip data that decodes to nothing for this long is refused: real deflate yields bytes within a block header. */
export const MAX_SILENT_GZIP_BYTES = 1024 * 1024;
/** Stacked content codings (`gzip, gzip`): each needs a decoder of its own, so the chain is bounded. */
export const MAX_CONTENT_CODINGS = 3;
/** Interim (1xx) responses before the final one: uncapped, a stream of them would never end. */
export const MAX_INTERIM_RESPONSES = 10;

/** Not retried: repeating would multiply the wait the user chose by the number of retries. */
export function deadlineError(deadlineMs: number): NetworkError {
  return new NetworkError(
    `no complete response within ${seconds(deadlineMs)} s (IDCLI_HTTP_TIMEOUT; raise it if the server is only slow)`,
    'EDEADLINE',
    { retriable: false },
  );
}

/** The connection stayed silent: an ordinary network failure, worth another try. */
export function idleError(idleMs: number): NetworkError {
  return new NetworkError(`no data received for ${seconds(idleMs)} s`, 'ETIMEDOUT');
}

/** Over the size limit: the same server sends the same page again, so retrying only downloads it again. */
export function tooLargeError(what: string): NetworkError {
  return new NetworkError(`response too large (${what})`, 'ETOOBIG', { retriable: false });
}

/** The server broke HTTP itself; asking again gets the same broken answer. */
export function protocolError(what: string): NetworkError {
  return new NetworkError(`invalid HTTP response (${what})`, 'EPROTO', { retriable: false });
}

/** RFC 9110 §15: a status code is three digits from 100 to 599; anything else is not HTTP. */
export function checkStatus(status: number): NetworkError | undefined {
  return status >= 100 && status <= 599 ? undefined : protocolError(`status ${String(status).padStart(3, '0')}`);
}

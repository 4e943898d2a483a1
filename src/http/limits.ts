/**
 * What one HTTP exchange may cost, the same for both transports, and the errors that end one that goes beyond.
 * A broken or hostile server must end in a bounded time with a bounded amount of memory, never in a hang.
 */
import { DEFAULT_HTTP_TIMEOUT_MS } from '../config.js';
import { seconds } from '../duration.js';
import { NetworkError } from './types.js';

/** No byte received for this long fails the attempt: a connection gone silent. */
export const IDLE_TIMEOUT_MS = 30_000;
/**
 * The whole exchange, from sending the request to the answer's last byte, when the caller gives no deadline: the
 * default of IDCLI_HTTP_TIMEOUT, defined with the setting (src/config.ts).
 */
export const DEFAULT_DEADLINE_MS = DEFAULT_HTTP_TIMEOUT_MS;
/**
 * A response larger than this is refused: a single page that big is a broken server, not data. A compressed body
 * is counted twice, as received and as decoded: the first bounds one that decodes to almost nothing (gzip
 * members of a byte each, without end), the second one that inflates without end (a "zip bomb").
 */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
/**
 * A request body that can be read only once (stdin, a pipe, a device) is kept in memory for a second attempt up to
 * this size, the same bound as a response's: no body idcli holds is larger.
 */
export const MAX_REPLAY_BYTES = MAX_BODY_BYTES;
/**
 * A gzip header (its optional extra field, file name and comment) must end within this many bytes. The extra
 * field's own length allows 64 KiB, and encoders write a name of a few bytes: a header still running past this
 * is a server sending bytes that zlib would read without end and without output.
 */
export const MAX_GZIP_HEADER_BYTES = 128 * 1024;
/**
 * gzip data that decodes to nothing for this long is refused. Real deflate yields bytes within a block's header of
 * a few hundred bytes; a stream that does not is a later member's header that never ends, or empty members without
 * end, which the limit on bytes received would otherwise read to its end.
 */
export const MAX_SILENT_GZIP_BYTES = 1024 * 1024;
/**
 * Content codings applied one over the other (`Content-Encoding: gzip, gzip`). A real chain is the server's coding
 * and perhaps a proxy's on top; each needs a decoder of its own, so the list a server may send is bounded.
 */
export const MAX_CONTENT_CODINGS = 3;
/**
 * Interim (1xx) responses before the final one. A real server sends one or two (100 Continue, 103 Early Hints);
 * without a cap each one starts a fresh head, so a stream of them would never end.
 */
export const MAX_INTERIM_RESPONSES = 10;

/**
 * The deadline of one attempt ran out while the server was still answering, or not answering. Not retried: the
 * user chose how long an exchange may take, and repeating it would multiply that wait by the number of retries.
 */
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

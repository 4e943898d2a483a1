// Only the error's code and the first line of the runtime's message are used: those name hosts and ports, never
// headers, bodies or proxy credentials.
import { protocolMismatch } from './protocol-mismatch.js';
import { RETRYABLE_STATUSES } from './retry.js';
import { withReason } from './status-text.js';
import { NetworkError } from './types.js';
import { clipMiddle, printable } from '../printable.js';
import { errCode, withoutRuntimeHint } from '../shape.js';

export interface ErrorContext {
  /** The proxy the request went through, as it may be shown (no credentials). */
  proxy?: string;
}

/** Failures to open a TCP connection. Through a proxy the only connection idcli opens is the one to the proxy. */
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Certificate chain verification failures (OpenSSL verify results as Node reports them). */
const UNTRUSTED_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
]);

export function toNetworkError(err: unknown, { proxy }: ErrorContext = {}): Error {
  if (err instanceof NetworkError) return err;
  if (!(err instanceof Error)) return new NetworkError(String(err), 'ECONNRESET');
  const code = codeOf(err);
  const first = withoutRuntimeHint(err.message.split('\n')[0] ?? '').trim() || code;
  // Before the abort pass-through: undici reports a refused CONNECT as an AbortError of its own.
  const proxyStatus = proxyRefusal(err, first);
  if (err.name === 'AbortError' && proxyStatus === undefined) return err;
  const via = proxy ? ` (through the proxy ${proxy})` : '';

  if (UNTRUSTED_CODES.has(code)) return new UntrustedCertificate(first, code, err);
  const mismatch = protocolMismatch(err, code, first);
  if (mismatch) return new NetworkError(mismatch, code, { cause: err, retriable: false });

  const tls = describeTls(code, first);
  // A certificate that fails today fails on every retry too.
  if (tls) return new NetworkError(tls, code, { cause: err, retriable: false });

  if (proxyStatus !== undefined && proxy) {
    const why =
      proxyStatus === 407
        ? 'requires authentication (HTTP 407 Proxy Authentication Required)'
        : `refused the tunnel with status ${withReason(proxyStatus)}`;
    // Only a refusal for load passes; who is asking (407, 403) or a redirect gets the same answer when asked again.
    return new NetworkError(`the proxy ${proxy} ${why}`, 'EPROXY', {
      cause: err,
      retriable: RETRYABLE_STATUSES.has(proxyStatus),
    });
  }

  // llhttp's codes: the server broke HTTP/1.1 framing, and will break it the same way when asked again.
  if (code.startsWith('HPE_'))
    return new NetworkError(`invalid HTTP response (${first})${via}`, code, { cause: err, retriable: false });

  const what = CODE_TEXT.get(code) ?? first;
  if (proxy && CONNECT_CODES.has(code))
    return new NetworkError(`cannot connect to the proxy ${proxy}: ${what}`, code, { cause: err });
  return new NetworkError(`${what}${via}`, code, { cause: err });
}

function codeOf(err: Error): string {
  const own = errCode(err);
  // undici's parser errors carry no code of their own (their code lookup misses); they are llhttp's all the same.
  if (own === undefined && err.name === 'HTTPParserError') return 'HPE_INVALID';
  // undici wraps the socket's error in some paths (e.g. a tunnel's TLS failure); the cause has the real code.
  const inner = err.cause instanceof Error ? errCode(err.cause) : undefined;
  if (own === 'UND_ERR_PRX_TLS' && inner) return inner;
  if (own === 'UND_ERR_SOCKET' && inner && inner !== 'UND_ERR_SOCKET') return inner;
  return own ?? inner ?? 'ECONNRESET';
}

/** A certificate no trusted CA issued: the failure a look at the certificate can explain. */
export class UntrustedCertificate extends NetworkError {
  /** OpenSSL's reason, as Node words it. */
  readonly reason: string;
  constructor(reason: string, code: string, cause: unknown, shown?: { subject: string; issuer: string }) {
    super(untrusted(reason, shown), code, { cause, retriable: false });
    this.reason = reason;
  }

  /** The same failure, naming the certificate the server showed and who issued it. */
  naming(shown: { subject: string; issuer: string }): UntrustedCertificate {
    return new UntrustedCertificate(this.reason, this.code, this.cause, shown);
  }
}

/** The ways to trust a CA, as docs/cli.md ("Certificates") lists them. */
export const HOW_TO_TRUST =
  "if that CA is your company's or your network's (TLS inspection), add it to the system's CA store (e.g. update-ca-certificates), or name its PEM file in SSL_CERT_FILE or NODE_EXTRA_CA_CERTS";

/** The most characters of a certificate's subject or issuer in the message, so it stays one short line. */
const MAX_NAME = 120;

/**
 * A subject or issuer as the message shows it: OpenSSL writes a control character as `\XX` (hex), which is turned
 * back into the character so `printable` escapes it JSON-style as everywhere else; then clipped in the middle.
 */
function shownName(dn: string): string {
  const decoded = dn.replace(/\\(\\|[0-9A-Fa-f]{2})/g, (all, esc: string) => {
    const code = esc === '\\' ? NaN : parseInt(esc, 16);
    return code < 0x20 || code === 0x7f ? String.fromCharCode(code) : all;
  });
  return clipMiddle(printable(decoded), MAX_NAME);
}

function untrusted(reason: string, shown?: { subject: string; issuer: string }): string {
  const named = shown ? `: "${shownName(shown.subject)}" issued by "${shownName(shown.issuer)}"` : '';
  return `the server's TLS certificate is not trusted (${reason})${named}; ${HOW_TO_TRUST}`;
}

function describeTls(code: string, message: string): string | undefined {
  if (code === 'CERT_HAS_EXPIRED') return "the server's TLS certificate has expired";
  if (code === 'CERT_NOT_YET_VALID') return "the server's TLS certificate is not valid yet; check this machine's clock";
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return "the server's TLS certificate is not issued for this host name";
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_')) return `the TLS handshake failed (${message})`;
  // OpenSSL's reading of a first record that is not TLS: most often a plain-HTTP server on the port.
  if (code === 'EPROTO' && /wrong version number/i.test(message))
    return 'the server did not answer in TLS (the port may serve plain http://)';
  return undefined;
}

/** The status a proxy refused a request with: a CONNECT answered non-200, or a forwarded request answered 407. */
function proxyRefusal(err: Error, message: string): number | undefined {
  const code = errCode(err);
  const tunnel = code === 'UND_ERR_ABORTED' && /^Proxy response \((\d{3})\) !== 200 when HTTP Tunneling/.exec(message);
  if (tunnel && tunnel[1]) return Number(tunnel[1]);
  if (code === 'UND_ERR_INVALID_ARG' && /Proxy Authentication Required \(407\)/.test(message)) return 407;
  return undefined;
}

const CODE_TEXT = new Map(
  Object.entries({
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset by the server',
    UND_ERR_SOCKET: 'connection reset by the server',
    ENOTFOUND: 'host name not found',
    EAI_AGAIN: 'host name not found',
    ETIMEDOUT: 'connection timed out',
    UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
    EPIPE: 'connection closed by the server',
  }),
);

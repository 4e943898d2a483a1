/**
 * What idcli takes as a redirect URI, for the setting's check and for the listener alike: plain http on a loopback
 * literal or localhost, with an explicit port (RFC 8252 §7.3). Of 127/8 only 127.0.0.1 is taken: it is the address
 * the CLI contract names, and the only one every platform has (macOS answers on no other by default). Matched as
 * written, never case-folded, because the URI is sent byte-for-byte and the service compares it exactly.
 */
const REDIRECT_RE = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost):(\d{1,5})(\/[^#]*)?$/;

export interface LoopbackRedirect {
  /** The host exactly as written in the URI: what the browser will put in the Host header. */
  host: '127.0.0.1' | '[::1]' | 'localhost';
  port: number;
  /** Everything after the port, kept byte-for-byte. */
  rest: string;
}

/** The parts of a redirect URI idcli accepts, or undefined for any other. */
export function parseRedirectUri(uri: string): LoopbackRedirect | undefined {
  const m = REDIRECT_RE.exec(uri);
  if (!m || Number(m[2]) > 65535) return undefined;
  // REDIRECT_RE matches only these.
  return { host: m[1] as LoopbackRedirect['host'], port: Number(m[2]), rest: m[3] ?? '' };
}

/**
 * The addresses a listener for this host binds. localhost may resolve to either family, so both loopback addresses
 * are taken: otherwise another local process could bind the one left free on the same port and receive the code
 * (RFC 8252 §8.3).
 */
export function bindAddresses(host: LoopbackRedirect['host']): string[] {
  return host === 'localhost' ? ['127.0.0.1', '::1'] : host === '[::1]' ? ['::1'] : [host];
}

/**
 * A server that does not speak HTTP/1.1, which is all idcli speaks: over TLS it refuses the one protocol idcli offers
 * (ALPN `http/1.1`, RFC 7301 §3.2), and in the clear (h2c) it answers with HTTP/2 frames. Either would otherwise read
 * as a failed handshake or a garbled response, although asking again or checking a certificate cannot help.
 */
const NOT_HTTP1 = 'the server does not speak HTTP/1.1, the only protocol idcli speaks';

/** The message for such a failure, or undefined for any other. */
export function protocolMismatch(err: Error, code: string, message: string): string | undefined {
  if (code === 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL' || /alert no application protocol/i.test(message))
    return `${NOT_HTTP1}: it refused HTTP/1.1 in the TLS handshake (a server that speaks only HTTP/2 does)`;
  if (code.startsWith('HPE_') && isHttp2Frame(firstBytes(err)))
    return `${NOT_HTTP1}: it answered in HTTP/2 (a server that speaks only HTTP/2 in the clear, h2c)`;
  return undefined;
}

/** What the server sent that failed to parse: node:http keeps it as `rawPacket`, undici as `data`. */
function firstBytes(err: Error): Uint8Array | undefined {
  const raw: unknown = 'rawPacket' in err ? err.rawPacket : 'data' in err ? err.data : undefined;
  return raw instanceof Uint8Array ? raw : undefined;
}

/** A frame header of the connection itself (stream 0): SETTINGS, which opens every HTTP/2 server's side, or GOAWAY. */
function isHttp2Frame(bytes: Uint8Array | undefined): boolean {
  if (bytes === undefined || bytes.length < 9) return false;
  const type = bytes[3];
  const stream = ((bytes[5]! & 0x7f) << 24) | (bytes[6]! << 16) | (bytes[7]! << 8) | bytes[8]!;
  return (type === 0x04 || type === 0x07) && stream === 0;
}

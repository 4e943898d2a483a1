/**
 * The certificate chain a server shows, read by a handshake of its own that sends nothing after it: the way the
 * failed request went (directly, or through the proxy's CONNECT tunnel), so what is seen is what the request saw,
 * a TLS-inspecting proxy's certificate included.
 *
 * Node does not hand the refused certificate over with the error: the socket drops it before the 'error' event,
 * and undici builds the tunnel's TLS socket out of reach. This handshake skips verification only to read the chain;
 * it is closed before a byte of HTTP is written, so nothing reaches a server that is not trusted.
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, type PeerCertificate, type SecureContext, type TLSSocket } from 'node:tls';
import { X509Certificate } from 'node:crypto';

/** The most a look at a certificate may add to a failure that is being reported. */
const PROBE_TIMEOUT_MS = 5000;

/** The chain from the server's certificate up, as far as the server sent it. */
export async function peerChain(
  target: URL,
  proxy: URL | undefined,
  proxyContext: SecureContext,
  signal?: AbortSignal,
): Promise<X509Certificate[]> {
  const sockets: Socket[] = [];
  const stop = AbortSignal.any([AbortSignal.timeout(PROBE_TIMEOUT_MS), ...(signal ? [signal] : [])]);
  // The TLS socket before the tunnel it runs over: Node 20 crashes when a socket goes before the TLS socket on it.
  const abort = (): void => [...sockets].reverse().forEach((s) => s.destroy());
  stop.addEventListener('abort', abort, { once: true });
  try {
    const host = bare(target.hostname);
    const port = Number(target.port || 443);
    const tunnel = proxy
      ? await connectTunnel(proxy, `${hostPort(target.hostname, port)}`, proxyContext, sockets)
      : undefined;
    const tls = tlsConnect({
      ...(tunnel ? { socket: tunnel } : { host, port }),
      ...(isIP(host) ? {} : { servername: host }),
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
    });
    sockets.push(tls);
    await once(tls, 'secureConnect');
    return chainOf(tls.getPeerCertificate(true));
  } finally {
    stop.removeEventListener('abort', abort);
    abort();
  }
}

/** Subject and issuer as `CN=…, O=…`, for a one-line message. */
export function names(cert: X509Certificate): { subject: string; issuer: string } {
  const line = (dn: string): string => dn.split('\n').filter(Boolean).join(', ');
  return { subject: line(cert.subject), issuer: line(cert.issuer) };
}

function chainOf(leaf: PeerCertificate & { issuerCertificate?: PeerCertificate }): X509Certificate[] {
  const chain: X509Certificate[] = [];
  let cert: (PeerCertificate & { issuerCertificate?: PeerCertificate }) | undefined = leaf;
  // Node links a self-signed certificate to itself: the walk stops at the first one seen twice.
  const seen = new Set<PeerCertificate>();
  while (cert?.raw && !seen.has(cert)) {
    seen.add(cert);
    chain.push(new X509Certificate(cert.raw));
    cert = cert.issuerCertificate;
  }
  return chain;
}

/** A CONNECT tunnel through an http:// or https:// proxy, with the credentials its URL carries. */
async function connectTunnel(proxy: URL, authority: string, context: SecureContext, sockets: Socket[]) {
  const port = Number(proxy.port || (proxy.protocol === 'https:' ? 443 : 80));
  const host = bare(proxy.hostname);
  const socket: Socket =
    proxy.protocol === 'https:'
      ? tlsConnect({ host, port, secureContext: context, ...(isIP(host) ? {} : { servername: host }) })
      : netConnect({ host, port });
  sockets.push(socket);
  await once(socket, proxy.protocol === 'https:' ? 'secureConnect' : 'connect');
  const auth = proxy.username
    ? `Proxy-Authorization: Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64')}\r\n`
    : '';
  socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`);
  const head = await readHead(socket);
  if (!/^HTTP\/1\.[01] 200/.test(head)) throw new Error('the proxy refused the tunnel');
  return socket;
}

/** The proxy's answer up to its blank line; a 200 to CONNECT has no body, so nothing after it is lost. */
function readHead(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const onData = (chunk: Buffer): void => {
      got += chunk.toString('latin1');
      const end = got.indexOf('\r\n\r\n');
      if (end === -1) return got.length > 65536 ? done(new Error('the proxy answered too long a head')) : undefined;
      done(undefined, got.slice(0, end));
    };
    const onEnd = (): void => done(new Error('the proxy closed the connection'));
    const done = (err?: Error, head?: string): void => {
      socket.off('data', onData).off('error', done).off('close', onEnd);
      if (err) reject(err);
      else resolve(head ?? '');
    };
    socket.on('data', onData).once('error', done).once('close', onEnd);
  });
}

function once(socket: Socket | TLSSocket, event: string): Promise<void> {
  return new Promise((resolve, reject) => {
    socket.once(event, () => resolve());
    socket.once('error', reject);
    socket.once('close', () => reject(new Error('connection closed')));
  });
}

const bare = (hostname: string): string => hostname.replace(/^\[|\]$/g, '');
const hostPort = (hostname: string, port: number): string => `${hostname}:${port}`;

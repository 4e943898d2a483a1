// Both transports verify against one TLS context (trust.ts: Node's roots, the system's store, NODE_EXTRA_CA_CERTS),
// loaded on the first HTTPS connection.
import type { SecureContext } from 'node:tls';
import type { Logger } from '../log.js';
import type { LimitOptions } from './attempt.js';
import { type Env, type ProxyEnv, proxyFor, readProxyEnv, showProxy, wantsProxy } from './proxy-env.js';
import { UntrustedCertificate } from './network-errors.js';
import { createNodeTransport } from './node-transport.js';
import { createProxyTransport } from './proxy-transport.js';
import type { HttpRequest, Transport } from './types.js';

export interface TransportOptions extends LimitOptions {
  /** Told once which proxy is in effect, and of a CA file or directory the trust store skipped. */
  log?: Pick<Logger, 'verbose'> & Partial<Pick<Logger, 'warn'>>;
  /**
   * The TLS context to verify against instead of the trust store: for peers with a CA of their own, and a client
   * certificate (the etcd store's members). Whatever gives it, every https:// connection gets its trust here.
   */
  trust?: () => Promise<SecureContext>;
}

export function createTransport(env: Env, options: TransportOptions = {}): Transport {
  const trust =
    options.trust ??
    ((): Promise<SecureContext> =>
      import('./trust.js').then((m) => m.trustStore(env, options.log?.warn?.bind(options.log)).secureContext));
  if (!wantsProxy(env)) return explaining(createNodeTransport(options, trust), trust);
  let proxy: ProxyEnv | undefined;
  try {
    proxy = readProxyEnv(env);
  } catch (err) {
    // A malformed proxy variable fails the first request (exit 2, naming the variable), not the construction:
    // callers such as `doctor` report failed requests as findings instead of stopping.
    return { send: () => Promise.reject(err), close() {} };
  }
  if (!proxy) return explaining(createNodeTransport(options, trust), trust);
  options.log?.verbose(describe(proxy));
  return explaining(createProxyTransport(proxy, options, trust), trust, proxy);
}

/**
 * A certificate refused for want of a trusted issuer is reported with the names on it: one more handshake, the way
 * the request went, reads them (peer-certificate.ts). If that look fails too, the failure is reported as it was.
 */
function explaining(transport: Transport, trust: () => Promise<SecureContext>, proxy?: ProxyEnv): Transport {
  async function explain(err: UntrustedCertificate, req: HttpRequest): Promise<UntrustedCertificate> {
    try {
      const target = typeof req.url === 'string' ? new URL(req.url) : req.url;
      const { peerChain, names } = await import('./peer-certificate.js');
      const via = proxy ? proxyFor(target, proxy) : undefined;
      const [leaf] = await peerChain(target, via, await trust(), req.signal);
      return leaf ? err.naming(names(leaf)) : err;
    } catch {
      return err;
    }
  }
  return {
    send: (req) =>
      transport.send(req).catch(async (err: unknown) => {
        throw err instanceof UntrustedCertificate ? await explain(err, req) : err;
      }),
    close: () => transport.close(),
  };
}

function describe(p: ProxyEnv): string {
  const parts: string[] = [];
  if (p.httpsProxy) parts.push(`https:// through ${showProxy(p.httpsProxy)} (${p.httpsVar})`);
  if (p.httpProxy) parts.push(`http:// through ${showProxy(p.httpProxy)} (${p.httpVar})`);
  const except = p.noProxy.trim() === '' ? '' : `; direct for NO_PROXY ${p.noProxy.trim()}`;
  return `proxy: ${parts.join(', ')}${except}`;
}

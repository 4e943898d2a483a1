// NODE_EXTRA_CA_CERTS needs nothing here: Node reads it at start-up into the CA store both transports verify against.
import type { Logger } from '../log.js';
import type { LimitOptions } from './attempt.js';
import { type Env, type ProxyEnv, readProxyEnv, showProxy, wantsProxy } from './proxy-env.js';
import { createNodeTransport, type TlsMaterial } from './node-transport.js';
import { createProxyTransport } from './proxy-transport.js';
import type { Transport } from './types.js';

export interface TransportOptions extends LimitOptions {
  /** Told once which proxy is in effect. */
  log?: Pick<Logger, 'verbose'>;
  /** Only for the direct transport: a caller with its own CA or client certificate talks to its peers directly. */
  tls?: TlsMaterial;
}

export function createTransport(env: Env, options: TransportOptions = {}): Transport {
  if (!wantsProxy(env)) return createNodeTransport(options);
  let proxy: ProxyEnv | undefined;
  try {
    proxy = readProxyEnv(env);
  } catch (err) {
    // A malformed proxy variable fails the first request (exit 2, naming the variable), not the construction:
    // callers such as `doctor` report failed requests as findings instead of stopping.
    return { send: () => Promise.reject(err), close() {} };
  }
  if (!proxy) return createNodeTransport(options);
  options.log?.verbose(describe(proxy));
  return createProxyTransport(proxy, options);
}

function describe(p: ProxyEnv): string {
  const parts: string[] = [];
  if (p.httpsProxy) parts.push(`https:// through ${showProxy(p.httpsProxy)} (${p.httpsVar})`);
  if (p.httpProxy) parts.push(`http:// through ${showProxy(p.httpProxy)} (${p.httpVar})`);
  const except = p.noProxy.trim() === '' ? '' : `; direct for NO_PROXY ${p.noProxy.trim()}`;
  return `proxy: ${parts.join(', ')}${except}`;
}

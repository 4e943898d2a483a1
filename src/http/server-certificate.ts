/**
 * What certificate a server shows idcli, who issued it, and which of the trusted stores (trust.ts) holds the CA at
 * the top of its chain: for `doctor`, which tells a company network's TLS inspection from a public CA.
 */
import { X509Certificate } from 'node:crypto';
import { names, peerChain } from './peer-certificate.js';
import { type Env, proxyFor, readProxyEnv, wantsProxy } from './proxy-env.js';
import { type TrustSource, type TrustStore, trustStore } from './trust.js';

export interface ServerCertificate {
  subject: string;
  issuer: string;
  /** The trusted CA the chain ends at, or the top of the chain as sent when no trusted CA issued it. */
  ca: string;
  /** The store that holds that CA; undefined when none does (the certificate is not trusted). */
  trustedBy?: TrustSource;
  /** Whether that CA is one of Node's bundled public roots. */
  publicRoot: boolean;
}

export async function inspectServerCertificate(url: URL, env: Env, signal?: AbortSignal): Promise<ServerCertificate> {
  const store = trustStore(env);
  const proxy = wantsProxy(env) ? readProxyEnv(env) : undefined;
  const chain = await peerChain(url, proxy ? proxyFor(url, proxy) : undefined, store.secureContext, signal);
  const leaf = chain[0];
  const top = chain.at(-1);
  if (!leaf || !top) throw new Error('the server showed no certificate');
  const anchor = anchorOf(top, store);
  const ca = anchor ? names(anchor.cert).subject : names(top).issuer;
  return {
    ...names(leaf),
    ca,
    ...(anchor ? { trustedBy: anchor.source } : {}),
    publicRoot: anchor?.source === 'node',
  };
}

/** The trusted CA that is, or signed, the last certificate of the chain; the first store listing it wins. */
function anchorOf(top: X509Certificate, store: TrustStore): { cert: X509Certificate; source: TrustSource } | undefined {
  for (const { pem, source } of store.anchors) {
    let ca: X509Certificate;
    try {
      ca = new X509Certificate(pem);
    } catch {
      continue;
    }
    if (ca.fingerprint256 === top.fingerprint256) return { cert: ca, source };
    if (top.checkIssued(ca) && top.verify(ca.publicKey)) return { cert: ca, source };
  }
  return undefined;
}

/**
 * The schemes a flow is tested over: plain HTTP, and HTTPS with a CA made for the run (test/emulator/pki.ts) that
 * idcli trusts through NODE_EXTRA_CA_CERTS, as users trust a company CA. Parametrise a test over SCHEMES rather than
 * copying it.
 */
import { makePki, type ServerCert } from '../emulator/pki.js';

export const SCHEMES = ['http', 'https'] as const;
export type Scheme = (typeof SCHEMES)[number];

export interface SchemeSetup {
  /** The emulator's certificate (EmulatorOptions.tls), over HTTPS. */
  tls?: ServerCert;
  /** What the CLI's environment needs to trust it: NODE_EXTRA_CA_CERTS over HTTPS, nothing over HTTP. */
  env: Record<string, string>;
}

/** Over HTTPS, makes a CA and a certificate for 127.0.0.1 under `dir` (a directory the test removes). */
export function schemeSetup(scheme: Scheme, dir: string): SchemeSetup {
  if (scheme === 'http') return { env: {} };
  const pki = makePki(dir);
  return { tls: pki, env: { NODE_EXTRA_CA_CERTS: pki.caFile } };
}

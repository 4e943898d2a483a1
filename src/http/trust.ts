/**
 * The certificate authorities every HTTPS connection idcli makes trusts: Node's bundled roots, the operating system's
 * store, and NODE_EXTRA_CA_CERTS, in one TLS context. Read on the first HTTPS connection and kept for the process:
 * a command that makes none (a cached `idcli token`) never reads the store, and one that makes many reads it once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tls from 'node:tls';
import type { Env } from './proxy-env.js';

/** Where a trusted CA came from, as doctor names it. */
export type TrustSource = 'node' | 'system' | 'extra';

export interface TrustStore {
  /** Given to every TLS connection instead of Node's default context. */
  secureContext: tls.SecureContext;
  /** Each trusted CA (PEM) with the first store it was found in. */
  anchors: readonly { pem: string; source: TrustSource }[];
}

// Per process, not per transport: doctor, a walk and a refresh each build their own transport, and the store is
// the same for all of them. Kept by the settings that choose the stores, which a process's runs share, so that runs
// in one process with different environments (the tests') each trust their own.
const loaded = new Map<string, TrustStore>();

export function trustStore(env: Env): TrustStore {
  const key = JSON.stringify([env.SSL_CERT_FILE, env.SSL_CERT_DIR, env.NODE_EXTRA_CA_CERTS]);
  let store = loaded.get(key);
  if (!store) loaded.set(key, (store = buildTrustStore(env)));
  return store;
}

/** Always reads the stores afresh (the bench measures this; everything else goes through trustStore). */
export function buildTrustStore(env: Env): TrustStore {
  const anchors: { pem: string; source: TrustSource }[] = [];
  const seen = new Set<string>();
  const add = (source: TrustSource, pems: readonly string[]): void => {
    for (const pem of pems) {
      // By the certificate's bytes: the same CA comes wrapped and commented differently from each store.
      const key = pem.replace(/-----[A-Z ]+-----|\s+/g, '');
      if (seen.has(key)) continue;
      seen.add(key);
      anchors.push({ pem: pem.trim(), source });
    }
  };
  add('node', tls.rootCertificates);
  add('system', systemCertificates(env));
  add('extra', extraCertificates(env));
  // An explicit `ca` replaces Node's default store (NODE_EXTRA_CA_CERTS included), hence all three are listed.
  return { secureContext: tls.createSecureContext({ ca: anchors.map((a) => a.pem) }), anchors };
}

type GetCACertificates = (type: 'system' | 'extra') => string[];

/** Node 22.15+ and 23.10+ read the stores themselves; Node 20 has no such call. */
function nodeGetter(): GetCACertificates | undefined {
  const get = (tls as { getCACertificates?: GetCACertificates }).getCACertificates;
  return typeof get === 'function' ? get : undefined;
}

/**
 * The operating system's CAs. Where Node has tls.getCACertificates('system') it is the one that knows the store:
 * the Keychain on macOS, the Windows store, and on Linux the file and directory its OpenSSL uses, honouring
 * SSL_CERT_FILE and SSL_CERT_DIR. Node 20 exposes neither that call nor OpenSSL's default paths (process.versions
 * gives only the version, and crypto no X509_get_default_cert_file), so there the Linux paths are read here.
 */
function systemCertificates(env: Env): string[] {
  const get = nodeGetter();
  if (get) {
    try {
      return get('system');
    } catch {
      return [];
    }
  }
  return opensslStoreFallback(env);
}

/**
 * OpenSSL's rules by hand for Node 20: SSL_CERT_FILE and SSL_CERT_DIR (a list, as in OpenSSL) when set, else the
 * bundle where distributions put it (the list Go's crypto/x509 uses on Linux). The hashed directory beside a bundle
 * holds the same CAs one per file, so it is read only when no bundle exists. Without a Keychain or Windows store
 * reader, Node 20 on macOS and Windows gets only the variables.
 */
function opensslStoreFallback(env: Env): string[] {
  const file = env.SSL_CERT_FILE;
  const dirs = env.SSL_CERT_DIR;
  if (file !== undefined || dirs !== undefined) {
    const fromDirs = (dirs ?? '').split(':').filter(Boolean).flatMap(pemsInDir);
    return [...(file ? pemsIn(file) : []), ...fromDirs];
  }
  if (process.platform === 'darwin' || process.platform === 'win32') return [];
  for (const bundle of LINUX_BUNDLES) {
    const pems = pemsIn(bundle);
    if (pems.length > 0) return pems;
  }
  return LINUX_DIRS.flatMap(pemsInDir);
}

const LINUX_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt', // Debian, Ubuntu, Gentoo, Arch
  '/etc/pki/tls/certs/ca-bundle.crt', // Fedora, RHEL 6
  '/etc/ssl/ca-bundle.pem', // openSUSE
  '/etc/pki/tls/cacert.pem', // OpenELEC
  '/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem', // CentOS, RHEL 7
  '/etc/ssl/cert.pem', // Alpine
];
const LINUX_DIRS = ['/etc/ssl/certs', '/etc/pki/tls/certs'];

/** NODE_EXTRA_CA_CERTS, which Node applies to its default context only: an explicit one must list them itself. */
function extraCertificates(env: Env): string[] {
  const get = nodeGetter();
  if (get) {
    try {
      return get('extra');
    } catch {
      return [];
    }
  }
  // Node 20 read the file at start-up (and warned if it could not); the same file is read again here.
  return env.NODE_EXTRA_CA_CERTS ? pemsIn(env.NODE_EXTRA_CA_CERTS) : [];
}

const PEM = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/g;

/** The certificates in a PEM file; an unreadable or missing file has none, as OpenSSL treats it. */
function pemsIn(path: string): string[] {
  try {
    return readFileSync(path, 'latin1').match(PEM) ?? [];
  } catch {
    return [];
  }
}

/** The certificates of an OpenSSL hashed directory (`<hash>.<n>` links, each to one PEM file). */
function pemsInDir(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => /^[0-9a-f]{8}\.\d+$/.test(n)).flatMap((n) => pemsIn(join(dir, n)));
}

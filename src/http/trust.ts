/**
 * The certificate authorities every HTTPS connection idcli makes trusts: Node's bundled roots, the operating system's
 * store, and NODE_EXTRA_CA_CERTS, in one TLS context. Read on the first HTTPS connection and kept for the process:
 * a command that makes none (a cached `idcli token`) never reads the store, and one that makes many reads it once.
 */
import { closeSync, constants, fstatSync, openSync, readdirSync, type Stats, statSync } from 'node:fs';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { O_NONBLOCK, readBoundedBytes, TooLarge } from '../private-path.js';
import { errCode } from '../shape.js';
import type { Env } from './proxy-env.js';

/** Far above any real bundle: a file beyond it is not one (and a device such as /dev/zero never ends). */
export const MAX_CA_FILE = 16 * 1024 * 1024;

/** Told once per process for each CA file or directory that was skipped, and why. */
export type Warn = (msg: string) => void;

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
// The warnings of a store built by a caller with no one to tell wait for the next caller that has someone.
const loaded = new Map<string, { store: TrustStore; untold: string[] }>();

export function trustStore(env: Env, warn?: Warn): TrustStore {
  const key = JSON.stringify([env.SSL_CERT_FILE, env.SSL_CERT_DIR, env.NODE_EXTRA_CA_CERTS]);
  let entry = loaded.get(key);
  if (!entry) {
    const untold: string[] = [];
    loaded.set(key, (entry = { store: buildTrustStore(env, (msg) => untold.push(msg)), untold }));
  }
  if (warn) for (const msg of entry.untold.splice(0)) warn(msg);
  return entry.store;
}

/** Always reads the stores afresh (the bench measures this; everything else goes through trustStore). */
export function buildTrustStore(env: Env, warn: Warn = () => {}): TrustStore {
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
  add('system', systemCertificates(env, warn));
  add('extra', extraCertificates(env, warn));
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
 * Node waits for ever on a FIFO named by SSL_CERT_FILE: the variables are checked first, and when one names
 * something that is not a store, idcli reads the others itself, as under Node 20.
 */
function systemCertificates(env: Env, warn: Warn): string[] {
  const get = nodeGetter();
  if (get && variablesHoldStores(env)) {
    try {
      return get('system');
    } catch {
      return [];
    }
  }
  return opensslStoreFallback(env, warn);
}

/** Whether SSL_CERT_FILE (when set) is a file of PEM certificates and each of SSL_CERT_DIR a directory. */
function variablesHoldStores(env: Env): boolean {
  const file = env.SSL_CERT_FILE;
  if (file && 'why' in readCaFile(file)) return false;
  return (env.SSL_CERT_DIR ?? '').split(':').filter(Boolean).every(isDirectory);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * OpenSSL's rules by hand for Node 20: SSL_CERT_FILE and SSL_CERT_DIR (a list, as in OpenSSL) when set, else the
 * bundle where distributions put it (the list Go's crypto/x509 uses on Linux). The hashed directory beside a bundle
 * holds the same CAs one per file, so it is read only when no bundle exists. Without a Keychain or Windows store
 * reader, Node 20 on macOS and Windows gets only the variables.
 */
function opensslStoreFallback(env: Env, warn: Warn): string[] {
  const file = env.SSL_CERT_FILE;
  const dirs = env.SSL_CERT_DIR;
  if (file !== undefined || dirs !== undefined) {
    const fromDirs = (dirs ?? '')
      .split(':')
      .filter(Boolean)
      .flatMap((dir) => pemsInDir(dir, warn));
    return [...(file ? pemsIn(file, (why) => warn(`ignoring SSL_CERT_FILE ${file}: ${why}`)) : []), ...fromDirs];
  }
  if (process.platform === 'darwin' || process.platform === 'win32') return [];
  for (const bundle of LINUX_BUNDLES) {
    const pems = pemsIn(bundle);
    if (pems.length > 0) return pems;
  }
  return LINUX_DIRS.flatMap((dir) => pemsInDir(dir));
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

/**
 * NODE_EXTRA_CA_CERTS, which Node applies to its default context only: an explicit one must list them itself. Node
 * reads the file itself too, at start-up or when its TLS module loads, so a FIFO there has stopped the process
 * before this runs (docs/cli.md, "Proxies and certificates"); what is checked here is what Node drops in silence.
 */
function extraCertificates(env: Env, warn: Warn): string[] {
  const path = env.NODE_EXTRA_CA_CERTS;
  if (!path) return [];
  // Read from the run's own environment on every Node, not through tls.getCACertificates('extra'): that one is what
  // this process was started with, which differs from `env` where a command runs in another's process (the tests).
  return pemsIn(path, (why) => warn(`ignoring NODE_EXTRA_CA_CERTS ${path}: ${why}`));
}

const PEM = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/g;

/** The certificates in a PEM file; one that gives none is told to `skipped` with why (OpenSSL skips it silently). */
function pemsIn(path: string, skipped?: (why: string) => void): string[] {
  const read = readCaFile(path);
  if ('pems' in read) return read.pems;
  if (read.why !== MISSING) skipped?.(read.why);
  return [];
}

const MISSING = 'it does not exist';

type CaFile = { pems: string[] } | { why: string };

/**
 * The certificates in the CA file at `path`, or why there are none. A link is followed (a hashed directory is all
 * links), but a FIFO never waited on, anything but a regular file never read, and a file read only up to a bound.
 */
function readCaFile(path: string): CaFile {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | O_NONBLOCK);
  } catch (err) {
    return { why: unreadable(err) };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { why: `it is ${kindOf(st)}` };
    const pems = readBoundedBytes(fd, MAX_CA_FILE).toString('latin1').match(PEM) ?? [];
    return pems.length > 0 ? { pems } : { why: 'it holds no PEM certificate' };
  } catch (err) {
    return { why: err instanceof TooLarge ? err.message : unreadable(err) };
  } finally {
    closeSync(fd);
  }
}

function unreadable(err: unknown): string {
  return errCode(err) === 'ENOENT' ? MISSING : `it cannot be read (${errCode(err) ?? 'error'})`;
}

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory, not a file';
  if (st.isFIFO()) return 'a FIFO, not a file';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device, not a file';
  return 'not a regular file';
}

/** The certificates of an OpenSSL hashed directory (`<hash>.<n>` links, each to one PEM file). */
function pemsInDir(dir: string, warn?: Warn): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    const why = errCode(err) === 'ENOTDIR' ? 'it is not a directory' : unreadable(err);
    if (why !== MISSING) warn?.(`ignoring SSL_CERT_DIR ${dir}: ${why}`);
    return [];
  }
  return names
    .filter((n) => /^[0-9a-f]{8}\.\d+$/.test(n))
    .flatMap((n) => pemsIn(join(dir, n), warn && ((why) => warn(`ignoring ${join(dir, n)} in SSL_CERT_DIR: ${why}`))));
}

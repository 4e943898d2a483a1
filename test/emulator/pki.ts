// A throwaway CA made with the openssl command, and server certificates it signs: the company CA users trust
// through NODE_EXTRA_CA_CERTS. Nothing is committed; every run makes its own keys in a directory it is given.
import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ServerCert {
  key: Buffer;
  cert: Buffer;
  /** base64 SHA-256 of the certificate's public key, as Chromium's --ignore-certificate-errors-spki-list takes it. */
  spki: string;
}

export interface Pki extends ServerCert {
  /** PEM file of the CA, for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  /** Another certificate signed by the same CA: for `names` (subjectAltName entries), valid for `days` (< 0: expired). */
  issue(name: string, opts: { names: string[]; days: number }): ServerCert;
}

/** Fails with a clear message when openssl is missing, rather than with an obscure spawn error. */
export function requireOpenssl(): void {
  try {
    execFileSync('openssl', ['version'], { stdio: 'pipe' });
  } catch {
    throw new Error('the TLS emulator needs the openssl command (apt-get install openssl) to make a throwaway CA');
  }
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function ssl(...args: string[]): void {
  execFileSync('openssl', args, { stdio: 'pipe' });
}

function spkiOf(cert: Buffer): string {
  const der = new X509Certificate(cert).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64');
}

/** A CA, and a certificate for IP 127.0.0.1 and localhost signed by it, written under `dir`. */
export function makePki(dir: string): Pki {
  requireOpenssl();
  const f = (name: string) => join(dir, name);
  ssl(
    'req',
    '-x509',
    ...EC,
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=idcli test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  const issue = (name: string, opts: { names: string[]; days: number }): ServerCert => {
    ssl('req', ...EC, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`), '-subj', `/CN=${name}`);
    writeFileSync(
      f(`${name}.ext`),
      `subjectAltName=${opts.names.join(',')}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
    );
    // A negative number of days puts notAfter before now: a certificate that has expired.
    ssl(
      'x509',
      '-req',
      '-in',
      f(`${name}.csr`),
      '-CA',
      f('ca.pem'),
      '-CAkey',
      f('ca.key'),
      '-CAcreateserial',
      '-out',
      f(`${name}.pem`),
      '-days',
      String(opts.days),
      '-extfile',
      f(`${name}.ext`),
    );
    const cert = readFileSync(f(`${name}.pem`));
    return { key: readFileSync(f(`${name}.key`)), cert, spki: spkiOf(cert) };
  };
  return { caFile: f('ca.pem'), issue, ...issue('server', { names: ['IP:127.0.0.1', 'DNS:localhost'], days: 2 }) };
}

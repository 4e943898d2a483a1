/**
 * The TLS context the etcd store's connections verify against, given to the HTTP transport through the same `trust`
 * seam as every other connection: IDCLI_ETCD_CACERT alone when set (as etcdctl's --cacert, that CA and no other),
 * else the trust store's anchors; plus the client certificate and key when given. Built once, on the first https://
 * connection, so a loopback http:// cluster never reads the system's store.
 */
import { readFileSync } from 'node:fs';
import type { SecureContext } from 'node:tls';
import { usageError } from '../errors.js';
import type { Env } from '../http/proxy-env.js';
import { errReason } from '../shape.js';

export interface EtcdTlsFiles {
  caCert?: string | undefined;
  cert?: string | undefined;
  key?: string | undefined;
}

/** Reads the PEM files now (a missing one is exit 2 before any request); the context waits for its first use. */
export function etcdTrust(files: EtcdTlsFiles, env: Env): () => Promise<SecureContext> {
  const ca = pem(files.caCert, 'IDCLI_ETCD_CACERT');
  const cert = pem(files.cert, 'IDCLI_ETCD_CERT');
  const key = pem(files.key, 'IDCLI_ETCD_KEY');
  if ((cert === undefined) !== (key === undefined))
    throw usageError('ETCD_FILE_UNREADABLE', 'IDCLI_ETCD_CERT and IDCLI_ETCD_KEY go together', 'set both, or neither');
  let context: Promise<SecureContext> | undefined;
  return () => (context ??= build(ca, cert, key, env));
}

async function build(
  ca: Buffer | undefined,
  cert: Buffer | undefined,
  key: Buffer | undefined,
  env: Env,
): Promise<SecureContext> {
  const tls = await import('node:tls');
  const anchors = ca ?? (await import('../http/trust.js')).trustStore(env).anchors.map((a) => a.pem);
  try {
    return tls.createSecureContext({ ca: anchors, ...(cert && key && { cert, key }) });
  } catch (err) {
    // OpenSSL's reason (a key that is not the certificate's, a file that is not PEM) names no secret.
    throw usageError(
      'ETCD_FILE_UNREADABLE',
      `IDCLI_ETCD_CACERT, IDCLI_ETCD_CERT or IDCLI_ETCD_KEY holds no usable PEM (${errReason(err)})`,
      'give the PEM files etcdctl takes as --cacert, --cert and --key',
    );
  }
}

function pem(path: string | undefined, name: string): Buffer | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path);
  } catch (err) {
    throw usageError('ETCD_FILE_UNREADABLE', `cannot read ${name} ${path} (${errReason(err)})`);
  }
}

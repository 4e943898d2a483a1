/** kubectl's exec credential plugin protocol: which API version kubectl asks for, and the ExecCredential it reads. */
import { IdcliError, ExitCode } from '../../errors.js';
import { clip, printable } from '../../printable.js';
import { isJsonObject } from '../../shape.js';

export const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'] as const;
export type ExecApiVersion = (typeof EXEC_API_VERSIONS)[number];

/**
 * The API version of KUBERNETES_EXEC_INFO, the ExecCredential kubectl sets for the plugin; v1 when it is unset, as
 * kubectl leaves it out when the kubeconfig says `provideClusterInfo: false` and older ones never set it.
 */
export function execApiVersion(info: string | undefined): ExecApiVersion {
  if (info === undefined || info.trim() === '') return EXEC_API_VERSIONS[0];
  let parsed: unknown;
  try {
    parsed = JSON.parse(info);
  } catch {
    throw execInfoError('is not JSON');
  }
  const version = isJsonObject(parsed) ? parsed.apiVersion : undefined;
  const known = EXEC_API_VERSIONS.find((v) => v === version);
  if (known) return known;
  if (typeof version !== 'string') throw execInfoError('names no apiVersion');
  throw execInfoError(`names ${clip(printable(version))}, which idcli does not speak`);
}

function execInfoError(what: string): IdcliError {
  return new IdcliError('KUBE_EXEC_INFO_INVALID', `KUBERNETES_EXEC_INFO ${what}`, ExitCode.USAGE, {
    hint: `set the exec block's apiVersion to ${EXEC_API_VERSIONS.join(' or ')}`,
  });
}

/** The object kubectl reads on the plugin's stdout; it caches the token until `expiresAt` (epoch ms). */
export function execCredential(apiVersion: ExecApiVersion, token: string, expiresAt: number | undefined): string {
  // Without an expiry kubectl keeps the token until the API server refuses it, then runs the plugin again.
  if (expiresAt === undefined) return `${JSON.stringify({ kind: 'ExecCredential', apiVersion, status: { token } })}\n`;
  // RFC 3339 in whole seconds, as Kubernetes writes its own timestamps; rounded down, so kubectl never holds it late.
  const expirationTimestamp = new Date(Math.floor(expiresAt / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  return `${JSON.stringify({ kind: 'ExecCredential', apiVersion, status: { expirationTimestamp, token } })}\n`;
}

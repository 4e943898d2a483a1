/**
 * The refresh decision, apart from the lock and the I/O: whether a stored sign-in serves as it is, whether a record
 * found under the lock is one another process wrote meanwhile, and what a refresh proves with. Pure, on a reading of
 * the clock.
 */
import { notLoggedIn } from '../errors.js';
import type { CredentialRecord } from '../store/record.js';

/** A record whose access token is there: what a caller of the session gets. */
export type UsableRecord = CredentialRecord & { accessToken: string };

/** Whether `r` holds an access token that still lives more than `minTtlSec` after `now` (epoch ms). */
export function usable(r: CredentialRecord, now: number, minTtlSec: number): r is UsableRecord {
  return r.accessToken !== undefined && r.expiresAt !== undefined && r.expiresAt - now > minTtlSec * 1000;
}

/**
 * Whether a record was written by another process after a point of this run. A store with revisions compares the
 * revision read at that point: machines' clocks differ, and a writer whose clock runs ahead would pass for a refresh
 * made after it. The processes of one machine share its clock, so a local store compares `updatedAt` with the run's start.
 */
export function writtenSince(
  point: { startedAt: number } | { before: CredentialRecord },
): (r: CredentialRecord) => boolean {
  if ('before' in point) return (r) => r.revision !== point.before.revision;
  return (r) => r.updatedAt > point.startedAt;
}

/** What a Serial PKCE refresh sends of the record: its refresh token and the verifier of the last challenge. */
export function refreshProof(record: CredentialRecord): { refreshToken: string; codeVerifier: string } {
  const { refreshToken, codeVerifier } = record;
  if (refreshToken === undefined)
    throw notLoggedIn('REFRESH_TOKEN_MISSING', 'the access token has expired and no refresh token is stored');
  if (codeVerifier === undefined)
    throw notLoggedIn('PKCE_VERIFIER_MISSING', 'the stored sign-in has no PKCE verifier, so it cannot be refreshed');
  return { refreshToken, codeVerifier };
}

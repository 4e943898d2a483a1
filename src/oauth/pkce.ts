/** PKCE (RFC 7636) values and `state` from the CSPRNG: guessable ones would let a forged callback through. */
import { createHash, randomBytes } from 'node:crypto';

export interface PkcePair {
  verifier: string;
  challenge: string;
  method: 'S256';
}

/** RFC 7636 §4.1: 43..128 characters of the unreserved set. */
export const VERIFIER_RE = /^[A-Za-z0-9._~-]{43,128}$/;

/** 32 random bytes in base64url: 43 characters, the 256 bits RFC 7636 §7.1 recommends, in the allowed alphabet. */
export function createVerifier(bytes = 32): string {
  if (bytes < 32 || bytes > 96) throw new RangeError('a PKCE verifier needs 32..96 random bytes');
  return randomBytes(bytes).toString('base64url');
}

/** RFC 7636 §4.2: BASE64URL(SHA256(ASCII(code_verifier))), without padding. */
export function challengeS256(verifier: string): string {
  if (!VERIFIER_RE.test(verifier)) throw new RangeError('invalid PKCE verifier');
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** A new pair per request: Serial PKCE sends a fresh challenge with every token request (service contract). */
export function createPkcePair(): PkcePair {
  const verifier = createVerifier();
  return { verifier, challenge: challengeS256(verifier), method: 'S256' };
}

/** 128 bits are far beyond guessing within the few minutes a login waits. */
export function createState(): string {
  return randomBytes(16).toString('base64url');
}

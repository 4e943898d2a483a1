// PKCE checks, written independently of src/oauth so the emulator cross-checks idcli instead of echoing it.
import { createHash, timingSafeEqual } from 'node:crypto';

// RFC 7636 §4.1: code-verifier = 43*128unreserved, unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~".
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export function isCodeVerifier(value: string): boolean {
  return VERIFIER.test(value);
}

/**
 * An S256 challenge is BASE64URL(SHA-256) without padding (RFC 7636 §4.2): exactly 43 characters. The last
 * character carries 2 unused bits, so only a canonical encoding of 32 bytes can be a real digest.
 */
export function isCodeChallenge(value: string): boolean {
  if (!CHALLENGE.test(value)) return false;
  const bytes = Buffer.from(value, 'base64url');
  return bytes.length === 32 && bytes.toString('base64url') === value;
}

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** RFC 7636 §4.6, compared in constant time so the check leaks nothing about the stored challenge. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  const a = Buffer.from(s256(verifier));
  const b = Buffer.from(challenge);
  return a.length === b.length && timingSafeEqual(a, b);
}

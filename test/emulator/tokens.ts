// Opaque secrets and the HS256 id_token (RFC 7519 / RFC 7515) the emulator issues.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** 32 random bytes, base64url: opaque and unguessable (RFC 6749 §10.10). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function hmac(secret: Buffer, data: string): string {
  return createHmac('sha256', secret).update(data).digest('base64url');
}

function b64json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

export function signJwt(claims: Record<string, unknown>, secret: Buffer): string {
  const input = `${b64json({ alg: 'HS256', typ: 'JWT' })}.${b64json(claims)}`;
  return `${input}.${hmac(secret, input)}`;
}

export function verifyJwt(jwt: string, secret: Buffer): Record<string, unknown> | null {
  const parts = jwt.split('.');
  if (parts.length !== 3) return null;
  const [header, payload, signature] = parts as [string, string, string];
  const expected = Buffer.from(hmac(secret, `${header}.${payload}`));
  const actual = Buffer.from(signature);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return null;
  try {
    const head: unknown = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    if (typeof head !== 'object' || head === null || (head as { alg?: unknown }).alg !== 'HS256') return null;
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return null;
    return claims as Record<string, unknown>;
  } catch {
    return null;
  }
}

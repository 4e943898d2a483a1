/**
 * A JWT's claims, for display and for the expiry of IDCLI_ACCESS_TOKEN. Not verified, as nothing here grants access
 * (OIDC Core §3.1.3.7 allows it for an ID token from the token endpoint over TLS).
 */
import { printable } from '../printable.js';
import { isJsonObject } from '../shape.js';

export interface Identity {
  name?: string;
  email?: string;
  subject?: string;
}

export function decodeJwtPayload(token: string): Record<string, unknown> | null {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[1] === undefined || !/^[A-Za-z0-9_-]+$/.test(parts[1])) return null;
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return isJsonObject(payload) ? payload : null;
  } catch {
    return null;
  }
}

/** 9999-12-31T23:59:59Z: an `exp` past it, or before 1970, names no date a person or a script can use. */
const LAST_EXP_SEC = 253_402_300_799;

export type JwtExpiry = { at: number } | { unknown: string };

/** When a JWT says it expires (`exp`, RFC 7519 §4.1.4), in epoch ms, or why that cannot be known. */
export function jwtExpiry(token: string): JwtExpiry {
  const exp = decodeJwtPayload(token)?.exp;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return { unknown: 'not a JWT with an exp claim' };
  if (exp < 0 || exp > LAST_EXP_SEC) return { unknown: `its exp claim, ${exp}, names no date from 1970 to 9999` };
  return { at: Math.round(exp * 1000) };
}

export function identityFromIdToken(idToken: string | undefined): Identity {
  const claims = idToken === undefined ? null : decodeJwtPayload(idToken);
  if (!claims) return {};
  const out: Identity = {};
  for (const [field, claim] of [
    ['name', 'name'],
    ['email', 'email'],
    ['subject', 'sub'],
  ] as const) {
    const text = displayText(claims[claim]);
    if (text) out[field] = text;
  }
  return out;
}

/** "Alice Example <alice@example.com>", or whichever part is known. */
export function describeIdentity(id: Identity): string | undefined {
  if (id.name && id.email) return `${id.name} <${id.email}>`;
  return id.name ?? id.email ?? id.subject;
}

/** Server-controlled text for a terminal: controls escaped, format characters (bidi, zero-width) dropped, bounded. */
function displayText(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const clean = printable(value.replace(/\p{Cf}/gu, '').trim());
  if (clean === '') return undefined;
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}

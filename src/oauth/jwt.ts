/**
 * Reads the claims of a JWT for display ("Signed in as …", `idcli status`) and for the expiry of an access token
 * given in IDCLI_ACCESS_TOKEN. The signature is not verified and nothing here grants access: an ID token came
 * straight from the token endpoint over TLS (OIDC Core §3.1.3.7 allows skipping validation in that case), and an
 * expiry only makes idcli refuse a token sooner.
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

/** The largest time a JavaScript Date holds (ECMA-262 §21.4.1.22): an `exp` beyond it names no date that can be shown. */
const MAX_DATE_MS = 8.64e15;

/**
 * When a JWT says it expires (`exp`, RFC 7519 §4.1.4), in epoch ms; undefined for an opaque token or a JWT without a
 * usable `exp`. Unverified like the rest of this module: the expiry only ever makes idcli refuse a token sooner
 * (`token --min-ttl`) or describe it (`status`), never trust one it would otherwise refuse.
 */
export function jwtExpiry(token: string): number | undefined {
  const exp = decodeJwtPayload(token)?.exp;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return undefined;
  const ms = Math.round(exp * 1000);
  return Math.abs(ms) <= MAX_DATE_MS ? ms : undefined;
}

export function identityFromIdToken(idToken: string | undefined): Identity {
  const claims = idToken === undefined ? null : decodeJwtPayload(idToken);
  if (!claims) return {};
  const out: Identity = {};
  const name = displayText(claims.name);
  const email = displayText(claims.email);
  const subject = displayText(claims.sub);
  if (name) out.name = name;
  if (email) out.email = email;
  if (subject) out.subject = subject;
  return out;
}

/** "Alice Example <alice@example.com>", or whichever part is known. */
export function describeIdentity(id: Identity): string | undefined {
  if (id.name && id.email) return `${id.name} <${id.email}>`;
  return id.name ?? id.email ?? id.subject;
}

/**
 * Claims are server-controlled text headed for a terminal: control characters shown escaped like in every message,
 * invisible format characters (bidi overrides, zero-width) dropped, bounded length.
 */
function displayText(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const clean = printable(value.replace(/\p{Cf}/gu, '').trim());
  if (clean === '') return undefined;
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}

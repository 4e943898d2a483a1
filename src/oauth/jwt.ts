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

/**
 * The last second a date with a four-digit year shows (9999-12-31T23:59:59Z). An `exp` past it, or before 1970,
 * names no date a person or a script can use: 1e300 is beyond anything a Date holds, and 8640000000000 a day in the
 * year 275760. Such a claim is told as what it is, rather than counted down from.
 */
const LAST_EXP_SEC = 253_402_300_799;

/** When a token expires in epoch ms, or why that cannot be known. */
export type JwtExpiry = { at: number } | { unknown: string };

/**
 * When a JWT says it expires (`exp`, RFC 7519 §4.1.4). Unverified like the rest of this module: the expiry only ever
 * makes idcli refuse a token sooner (`token --min-ttl`) or describe it (`status`), never trust one it would
 * otherwise refuse (docs/cli.md, "IDCLI_ACCESS_TOKEN").
 */
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

/**
 * Reads the claims of an ID token for display only ("Signed in as …", `idcli status`). The signature is not
 * verified and nothing here is used for an access decision: the token came straight from the token endpoint over
 * TLS (OIDC Core §3.1.3.7 allows skipping validation in that case) and idcli only shows who it is.
 */
import { printable } from '../printable.js';

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
    return typeof payload === 'object' && payload !== null && !Array.isArray(payload)
      ? (payload as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
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

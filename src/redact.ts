/**
 * Redaction for anything that may reach a log line. OAuth puts secrets in query strings (the authorization code
 * in the callback, RFC 6749 §4.1.2) and form bodies, so URLs and forms are scrubbed by parameter name; values the
 * process has learned at run time (tokens it received) are scrubbed by value in the logger.
 */
import { clip } from './printable.js';

const SECRET_PARAMS = new Set([
  'code',
  'code_verifier',
  'access_token',
  'refresh_token',
  'id_token',
  'token',
  'client_secret',
  'password',
  'state',
]);

export const REDACTED = '[redacted]';

export function isSecretParam(name: string): boolean {
  return SECRET_PARAMS.has(name.toLowerCase());
}

/** The URL without credentials or secret parameters, cut to MAX_ECHO characters: a server's link can be huge. */
export function redactUrl(url: string | URL): string {
  return clip(redactSecrets(url));
}

/**
 * The URL without credentials, the value of each secret parameter replaced and every other byte as it was: a URL
 * printed for the user to run again (the resume hint) must still select the same page.
 */
export function redactSecrets(url: string | URL): string {
  let u: URL;
  try {
    u = new URL(String(url));
  } catch {
    return REDACTED;
  }
  u.username = '';
  u.password = '';
  if (u.search !== '') u.search = redactQuery(u.search.slice(1));
  return u.href;
}

function redactQuery(query: string): string {
  return query
    .split('&')
    .map((part) => (isSecretParam(paramName(part)) ? `${part.split('=', 1)[0]}=${REDACTED}` : part))
    .join('&');
}

/** The name of a query's `name=value` part as a server reads it (`access%5Ftoken=…` is `access_token`). */
export function paramName(part: string): string {
  const raw = part.split('=', 1)[0] ?? '';
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return raw;
  }
}

/** Replace every occurrence of each known secret value in `text`. */
export function redactValues(text: string, secrets: Iterable<string>): string {
  let out = text;
  for (const s of secrets) if (s.length >= 8 && out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

/**
 * Redaction for anything that may reach a log line, an error or the resume hint. OAuth puts secrets in query
 * strings (the authorization code in the callback, RFC 6749 §4.1.2) and form bodies, and servers put signatures and
 * keys in the links they hand out, so URLs and forms are scrubbed by parameter name; values the process has learned
 * at run time (the access token it sends) are scrubbed by value, wherever they appear. `redactLine` applies all of it
 * to free text, and the logger and the error line pass every line through it (docs/cli.md, "Streams").
 */
import { clip } from './printable.js';

/**
 * The query parameters whose values are secrets, by name without regard to case (docs/cli.md, "Streams"):
 * OAuth's own (RFC 6749, RFC 7636), the signatures and credentials of pre-signed links (AWS SigV4 `X-Amz-*`,
 * Google Cloud `X-Goog-*`, Azure SAS `sig`, CloudFront `Signature`), and the usual spellings of an API key. Names
 * that also serve as cursors (`pageToken`, `continuationToken`) are not on it: a resume hint needs them.
 */
const SECRET_PARAMS = new Set([
  'code',
  'code_verifier',
  'state',
  'access_token',
  'refresh_token',
  'id_token',
  'token',
  'client_secret',
  'client_assertion',
  'password',
  'secret',
  'sig',
  'signature',
  'x-amz-signature',
  'x-amz-credential',
  'x-amz-security-token',
  'x-goog-signature',
  'x-goog-credential',
  'api_key',
  'api-key',
  'apikey',
  'key',
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

/**
 * Replace every occurrence of each known secret value in `text`, as it is and percent-encoded (as a URL's query
 * would carry it). Values under 8 characters are left alone: they would match ordinary words.
 */
export function redactValues(text: string, secrets: Iterable<string>): string {
  let out = text;
  for (const s of secrets) {
    if (s.length < 8) continue;
    for (const form of new Set([s, encodeURIComponent(s)]))
      if (out.includes(form)) out = out.split(form).join(REDACTED);
  }
  return out;
}

/**
 * A URL's userinfo (`https://user:pass@host`) anywhere in free text: a message may quote a URL that does not parse
 * (`http://[bad/…`), so this is found by its shape rather than by the URL parser. Brackets, which no userinfo holds,
 * leave a pattern such as `http://[user:password@]host` in a hint as it is.
 */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@'"`<>[\]]*@/gi;
/**
 * A `name=value` pair after `?`, `&` or `;`, or at the start of a quoted string: a query, within a URL or quoted
 * without one, and a quoted form body. Not after a space: prose such as "takes key=value" names no secret. The value
 * ends where a URL in a message ends.
 */
const PAIR = /([?&;'"`])([^=&?#\s'"`]+)=([^&#\s'"`]*)/g;

/**
 * `text` with every secret it shows replaced: the values in `secrets`, the userinfo of any URL in it and the value
 * of every secret parameter, whether the URL around it parses or not. The one redaction of every line idcli writes
 * to stderr (errors, refusals, hints, warnings, `--verbose`), so no message has to remember its own. Idempotent.
 */
export function redactLine(text: string, secrets: Iterable<string> = []): string {
  return redactValues(text, secrets)
    .replace(USERINFO, `$1${REDACTED}@`)
    .replace(PAIR, (pair: string, lead: string, name: string, value: string) =>
      value !== REDACTED && isSecretParam(paramName(name)) ? `${lead}${name}=${REDACTED}` : pair,
    );
}

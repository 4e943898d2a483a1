/**
 * Redaction of whatever may reach stderr (docs/cli.md, "Streams"): OAuth and signed links put secrets in query
 * strings and forms, scrubbed by parameter name; values learned at run time (the access token) by value.
 */
import { clip } from './printable.js';

/**
 * The query parameters whose values are secrets, by name without regard to case (docs/cli.md, "Streams"):
 * OAuth's own (RFC 6749, RFC 7636), the signatures and credentials of pre-signed links (AWS SigV4 `X-Amz-*`,
 * Google Cloud `X-Goog-*`, Azure SAS `sig`, CloudFront `Signature`), and the usual spellings of an API key. Names
 * that also serve as cursors (`pageToken`, `continuationToken`) are not on it: a resume hint needs them.
 */
const SECRET_PARAMS = new Set([
  ...['code', 'code_verifier', 'state', 'access_token', 'refresh_token', 'id_token', 'token', 'client_secret'],
  ...['client_assertion', 'password', 'secret', 'sig', 'signature', 'api_key', 'api-key', 'apikey', 'key'],
  ...['x-amz-signature', 'x-amz-credential', 'x-amz-security-token', 'x-goog-signature', 'x-goog-credential'],
]);

export const REDACTED = '[redacted]';

export function isSecretParam(name: string): boolean {
  return SECRET_PARAMS.has(name.toLowerCase());
}

/** The URL without credentials or secret parameters, cut to MAX_ECHO characters: a server's link can be huge. */
export function redactUrl(url: string | URL): string {
  return clip(redactSecrets(url));
}

/** The URL without credentials or secret values, every other byte kept: a resume hint must select the same page. */
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
 * Every known secret value in `text` replaced, as is and with any of its characters percent-encoded (in either case
 * of hex, as a server or a proxy may re-encode a URL); under 8 characters they are words. Then every run of token
 * characters holding a piece of a secret (redactPieces): a host name lower-cases a token, and a clipped echo cuts it.
 */
export function redactValues(text: string, secrets: Iterable<string>): string {
  let out = text;
  // The pattern of a long token is built only for a line that holds the token once decoded (or cannot tell).
  let decoded: string | undefined;
  const long: string[] = [];
  for (const s of secrets) {
    if (s.length < 8) continue;
    if (s.length >= PIECE) long.push(s);
    if (out.includes('%')) {
      decoded ??= percentDecoded(text);
      if (s.includes('%') || decoded.includes(s)) out = out.replace(encodedForms(s), REDACTED);
    } else if (out.includes(s)) out = out.split(s).join(REDACTED);
  }
  // The early-out: a line with no run of PIECE token characters holds no piece of any secret.
  return long.length === 0 || !HAS_RUN.test(out) ? out : redactPieces(out, long);
}

/**
 * How long a piece of a secret must be to be redacted wherever it appears, in any case: long enough that no word or
 * path idcli prints holds one by chance, short enough that a copy clipped for a message still does.
 */
export const PIECE = 12;
/** The characters tokens are made of (base64, base64url, JWTs, RFC 6750's b64token), and `%` of their `%XX` forms. */
const TOKEN_RUN = new RegExp(`[\\w.~+/=%-]{${PIECE},}`, 'g');
const HAS_RUN = new RegExp(TOKEN_RUN.source);

/**
 * `text` with every run of token characters redacted whole when it holds, in any case and percent-decoded or not,
 * PIECE characters in a row of one of `secrets`: a run that is a piece of a secret, or contains one.
 */
function redactPieces(text: string, secrets: readonly string[]): string {
  let pieces: ReadonlySet<string> | undefined;
  return text.replace(TOKEN_RUN, (run) => {
    pieces ??= piecesOf(secrets);
    const holds = (s: string) => holdsPiece(s.toLowerCase(), pieces!);
    return holds(run) || (run.includes('%') && holds(percentDecoded(run))) ? REDACTED : run;
  });
}

function holdsPiece(lower: string, pieces: ReadonlySet<string>): boolean {
  for (let i = 0; i + PIECE <= lower.length; i++) if (pieces.has(lower.slice(i, i + PIECE))) return true;
  return false;
}

// Every line the logger writes is redacted against the same few secrets: their pieces are worked out once each.
const piecesCache = new Map<string, ReadonlySet<string>>();

/** Every PIECE characters in a row of each secret, lower-cased. */
function piecesOf(secrets: readonly string[]): ReadonlySet<string> {
  if (secrets.length === 1) return piecesOfOne(secrets[0]!);
  return new Set(secrets.flatMap((s) => [...piecesOfOne(s)]));
}

function piecesOfOne(secret: string): ReadonlySet<string> {
  let pieces = piecesCache.get(secret);
  if (!pieces) {
    const lower = secret.toLowerCase();
    pieces = new Set(Array.from({ length: lower.length - PIECE + 1 }, (_, i) => lower.slice(i, i + PIECE)));
    if (piecesCache.size >= 16) piecesCache.clear();
    piecesCache.set(secret, pieces);
  }
  return pieces;
}

/** Each run of `%XX` decoded as UTF-8; a copy of a secret, encoded in part or whole, becomes the secret. */
function percentDecoded(text: string): string {
  return text.replace(/(?:%[0-9a-f]{2})+/gi, (run) => Buffer.from(run.replaceAll('%', ''), 'hex').toString('utf8'));
}

/** `secret` with each character as is or as its UTF-8 bytes in `%XX` form, whatever the case of the hex. */
function encodedForms(secret: string): RegExp {
  const anyCase = (hex: string) => [...hex].map((d) => (/[0-9]/.test(d) ? d : `[${d}${d.toLowerCase()}]`)).join('');
  const char = (c: string) => {
    const bytes = [...Buffer.from(c, 'utf8')].map((b) => `%${anyCase(b.toString(16).toUpperCase().padStart(2, '0'))}`);
    return `(?:${c.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')}|${bytes.join('')})`;
  };
  return new RegExp([...secret].map(char).join(''), 'g');
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
 * `text` with every secret replaced: known values, URL userinfo and secret parameters, parsed or not. The one
 * redaction of every stderr line (errors, hints, warnings, `--verbose`), so no message must remember it. Idempotent.
 */
export function redactLine(text: string, secrets: Iterable<string> = []): string {
  return redactValues(text, secrets)
    .replace(USERINFO, `$1${REDACTED}@`)
    .replace(PAIR, (pair: string, lead: string, name: string, value: string) =>
      value !== REDACTED && isSecretParam(paramName(name)) ? `${lead}${name}=${REDACTED}` : pair,
    );
}

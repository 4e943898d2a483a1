/**
 * What idcli accepts of a token and of its lifetime, wherever the token comes from: the token endpoint, the
 * credential store or IDCLI_ACCESS_TOKEN. One set of rules, so a token taken from one is never refused by another.
 */

/**
 * Visible ASCII only (RFC 6750 §2.1 b64token and more). Tokens go into headers and request bodies as they are, so a
 * control character could only break the request, or end a header early.
 */
export function isTokenText(value: string): boolean {
  return /^[\x21-\x7E]+$/.test(value);
}

/**
 * The least lifetime a token handed out still has, unless `--min-ttl` asks otherwise: a cached token expiring sooner
 * is refreshed first, and a request or a page fetch (with its retries) fits well within it (docs/cli.md, "token").
 */
export const MIN_TTL_SEC = 60;

/**
 * The longest access-token lifetime idcli believes. A server's larger `expires_in` (1e300, say) is taken as this:
 * a token is refreshed at least once a year, and every expiry stays a date that can be shown.
 */
export const MAX_LIFETIME_SEC = 365 * 24 * 60 * 60;

/**
 * Validation of the authorization response (RFC 6749 §4.1.2). One without our `state` is refused and the login
 * keeps waiting, so a stray or forged request can neither inject a code (CSRF, RFC 6749 §10.12) nor abort it.
 */
import { timingSafeEqual } from 'node:crypto';
import { printable } from '../printable.js';

export interface CallbackExpectation {
  state: string;
  /** RFC 9207 §2.4: when the response carries `iss`, it must equal the issuer we sent the user to. */
  issuer: string;
}

export type CallbackOutcome =
  /** Not ours (no or wrong state, repeated parameters): answer it, keep waiting. */
  | { kind: 'ignore'; reason: string }
  | { kind: 'code'; code: string }
  /** The authorization server refused (e.g. access_denied, login_required). */
  | { kind: 'error'; error: string; description?: string }
  /** Ours, but unusable: the sign-in cannot succeed. */
  | { kind: 'invalid'; reason: string; issuerMismatch?: boolean };

const SINGLE = ['state', 'code', 'error', 'error_description', 'iss'] as const;

export function validateCallback(params: URLSearchParams, expected: CallbackExpectation): CallbackOutcome {
  // RFC 6749 §3.1: parameters must not be repeated; a repeated one makes the whole response untrustworthy.
  for (const name of SINGLE) {
    if (params.getAll(name).length > 1) return { kind: 'ignore', reason: `repeated parameter ${name}` };
  }
  const state = params.get('state');
  if (state === null || state === '') return { kind: 'ignore', reason: 'missing state' };
  if (!sameSecret(state, expected.state)) return { kind: 'ignore', reason: 'state does not match' };

  const iss = params.get('iss');
  if (iss !== null && iss !== expected.issuer) {
    // A mix-up attack (RFC 9207 §2.4) or a wrong IDCLI_ISSUER: either way the code must not be redeemed here.
    const reason = 'the authorization response came from an unexpected issuer';
    return { kind: 'invalid', reason, issuerMismatch: true };
  }

  const error = params.get('error');
  if (error !== null) {
    const description = printableOAuthText(params.get('error_description') ?? '', 200) || undefined;
    return { kind: 'error', error: printableOAuthText(error, 64) || 'unknown_error', description };
  }
  const code = params.get('code');
  if (code === null || code === '')
    return { kind: 'invalid', reason: 'the authorization response carried neither a code nor an error' };
  return { kind: 'code', code };
}

/** Constant-time comparison: the state is a secret shared with the browser only. */
function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** RFC 6749 §4.1.2.1's characters for `error` and its description; others dropped, controls shown escaped. */
export function printableOAuthText(value: string, max: number): string {
  const kept = printable(value.replace(/[^\x00-\x21\x23-\x5B\x5D-\x9F]/g, '').trim());
  return kept.length > max ? `${kept.slice(0, max)}…` : kept;
}

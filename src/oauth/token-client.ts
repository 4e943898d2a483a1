/**
 * The token endpoint (RFC 6749 §4.1.3, §6) with Serial PKCE. Never retried: a refresh token sent again after a lost
 * response looks like theft (RFC 9700 §4.14.2) and revokes the sign-in.
 */
import { type ErrorCode, ExitCode, IdcliError } from '../errors.js';
import { request as httpRequest } from '../http/client.js';
import { headerValue, type HttpResponse, NetworkError } from '../http/types.js';
import { printable } from '../printable.js';
import { isTokenText, MAX_LIFETIME_SEC } from '../token-rules.js';
import { tokenEndpoint } from './authorize-url.js';
import { assertString, isJsonObject } from '../shape.js';
import { clockOf } from '../clock.js';
import type { SessionContext } from '../context.js';

export interface TokenSet {
  accessToken: string;
  tokenType: string;
  /** Seconds: as sent, or MAX_LIFETIME_SEC when the server sent more. */
  expiresIn: number;
  /** The server's expires_in when it was more than MAX_LIFETIME_SEC and cut to it. */
  sentExpiresIn?: number;
  refreshToken?: string;
  idToken?: string;
  scope?: string;
}

interface PkceGrant {
  clientId: string;
  codeVerifier: string;
  /** The challenge of the NEXT verifier, which the next refresh will prove. */
  nextChallenge: string;
}

export interface CodeGrant extends PkceGrant {
  code: string;
  redirectUri: string;
}

export interface RefreshGrant extends PkceGrant {
  refreshToken: string;
}

/** The authorization server refused the grant (RFC 6749 §5.2); `oauthError` is the RFC error code. */
export class OAuthError extends IdcliError {
  constructor(
    code: ErrorCode,
    message: string,
    exitCode: typeof ExitCode.USAGE | typeof ExitCode.AUTH | typeof ExitCode.NETWORK,
    override readonly oauthError: string,
    override readonly status: number,
    hint?: string,
  ) {
    super(code, message, exitCode, { oauthError, hint });
    this.name = 'OAuthError';
  }
}

export function codeGrantForm(g: CodeGrant): URLSearchParams {
  const head = { grant_type: 'authorization_code', code: g.code, client_id: g.clientId, redirect_uri: g.redirectUri };
  return new URLSearchParams({ ...head, ...pkceFields(g) });
}

export function refreshGrantForm(g: RefreshGrant): URLSearchParams {
  const head = { grant_type: 'refresh_token', refresh_token: g.refreshToken, client_id: g.clientId };
  return new URLSearchParams({ ...head, ...pkceFields(g) });
}

function pkceFields(g: PkceGrant) {
  return { code_verifier: g.codeVerifier, code_challenge: g.nextChallenge, code_challenge_method: 'S256' };
}

/** One POST, no retry, no redirect followed; settings.httpTimeoutMs bounds it to the answer's last byte. */
export async function postTokenRequest(
  { deps, settings }: SessionContext,
  baseUrl: string,
  form: URLSearchParams,
  signal: AbortSignal,
): Promise<TokenSet> {
  const url = tokenEndpoint(baseUrl);
  let res: HttpResponse;
  try {
    res = await httpRequest({
      method: 'POST',
      url,
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      signal,
      // A sent refresh is finished rather than abandoned (see session.ts), but within the idle timeout and deadline.
      deadlineMs: settings.httpTimeoutMs,
      compress: settings.httpCompression,
      log: deps.log,
      env: deps.env,
      clock: clockOf(deps),
    });
  } catch (err) {
    if (!(err instanceof NetworkError)) throw err;
    // The message names the failure only (refused, reset, timed out); the form with its secrets is not in it.
    throw new IdcliError('NETWORK_TOKEN_REQUEST_FAILED', `POST ${url} failed: ${err.message}`, ExitCode.NETWORK, {
      cause: err,
    });
  }
  const tokens = processTokenResponse(res, sentValues(form));
  if (tokens.sentExpiresIn !== undefined) {
    deps.log.verbose(
      `the server's expires_in of ${tokens.sentExpiresIn} s is more than a year; the access token is taken to expire in a year`,
    );
  }
  return tokens;
}

/** The secrets of a request, so that a hostile server echoing one back in `error` cannot get it printed. */
function sentValues(form: URLSearchParams): string[] {
  return ['code', 'refresh_token', 'code_verifier'].map((k) => form.get(k) ?? '').filter((v) => v !== '');
}

const WHERE = 'from /oauth/token';
const ERROR_CODE_RE = /^[a-z][a-z0-9_]{1,63}$/;

export function processTokenResponse(res: HttpResponse, sent: readonly string[] = []): TokenSet {
  const { status } = res;
  if (status >= 300 && status < 400) {
    throw contractError(
      'CONTRACT_TOKEN_REDIRECT',
      `the server sent a redirect (HTTP ${status}) ${WHERE}; idcli does not follow redirects of the token endpoint`,
    );
  }
  if (status === 200) return parseTokenBody(res);
  const code = errorCode(res, sent);
  if (status === 400 || status === 401) {
    if (code === 'invalid_grant')
      throw new OAuthError(
        'OAUTH_INVALID_GRANT',
        'the server refused the grant (invalid_grant)',
        ExitCode.AUTH,
        code,
        status,
      );
    if (code !== undefined) {
      // A client the server does not know, or may not use this grant, is idcli's configuration, not the network.
      const client = code === 'invalid_client' || code === 'unauthorized_client';
      const hint = client ? 'check client-id and client-name with `idcli config list`' : undefined;
      const exit = client ? ExitCode.USAGE : ExitCode.NETWORK;
      throw new OAuthError(
        client ? 'OAUTH_CLIENT_REFUSED' : 'OAUTH_REQUEST_REFUSED',
        `the token request was refused (HTTP ${status}, ${code})`,
        exit,
        code,
        status,
        hint,
      );
    }
  }
  const message = `the token endpoint answered HTTP ${status}${code === undefined ? '' : `, ${code}`}`;
  throw new IdcliError('NETWORK_TOKEN_ENDPOINT_STATUS', message, ExitCode.NETWORK, { oauthError: code });
}

/** The RFC 6749 §5.2 `error` code, never the body or `error_description`: they may echo what was sent. */
function errorCode(res: HttpResponse, sent: readonly string[]): string | undefined {
  if (!isJson(res)) return undefined;
  const body = parseJson(res.body);
  const code = isJsonObject(body) ? body.error : undefined;
  if (typeof code !== 'string' || !ERROR_CODE_RE.test(code) || sent.includes(code)) return undefined;
  return code;
}

function parseTokenBody(res: HttpResponse): TokenSet {
  if (res.body.length === 0) throw contractError('CONTRACT_TOKEN_EMPTY_BODY', `the server sent an empty body ${WHERE}`);
  if (!isJson(res)) {
    const type = headerValue(res.headers, 'content-type');
    const what = type && /html/i.test(type) ? 'an HTML page' : 'a body that is not JSON';
    throw contractError('CONTRACT_TOKEN_NOT_JSON', `the server sent ${what} ${WHERE}`);
  }
  const o = parseJson(res.body);
  if (o === undefined) throw contractError('CONTRACT_TOKEN_MALFORMED_JSON', `the server sent malformed JSON ${WHERE}`);
  if (!isJsonObject(o))
    throw contractError('CONTRACT_TOKEN_NOT_AN_OBJECT', `the server sent JSON that is not an object ${WHERE}`);
  const accessToken = o.access_token;
  if (typeof accessToken !== 'string' || accessToken === '') throw missing('access_token');
  if (!isTokenText(accessToken)) throw invalid('access_token');
  const out: TokenSet = { accessToken, tokenType: tokenText(o, 'token_type') ?? 'Bearer', ...lifetime(o.expires_in) };
  // Everything kept is checked here, so nothing the store would refuse on the next read is ever saved.
  out.refreshToken = tokenText(o, 'refresh_token');
  out.idToken = tokenText(o, 'id_token');
  const scope = optionalString(o, 'scope');
  if (scope !== undefined && printable(scope) !== scope) throw invalid('scope');
  if (scope) out.scope = scope;
  return out;
}

/** expires_in: required (the service contract and every cache decision); more than a year is cut to a year. */
function lifetime(expiresIn: unknown): Pick<TokenSet, 'expiresIn' | 'sentExpiresIn'> {
  if (expiresIn === undefined || expiresIn === null) throw missing('expires_in');
  if (typeof expiresIn !== 'number' || !Number.isInteger(expiresIn) || expiresIn < 0) throw invalid('expires_in');
  if (expiresIn <= MAX_LIFETIME_SEC) return { expiresIn };
  return { expiresIn: MAX_LIFETIME_SEC, sentExpiresIn: expiresIn };
}

/** An optional token field: absent or empty is undefined; anything but visible ASCII is refused (exit 5). */
function tokenText(o: Record<string, unknown>, name: string): string | undefined {
  const v = optionalString(o, name);
  if (v === undefined || v === '') return undefined;
  if (!isTokenText(v)) throw invalid(name);
  return v;
}

function optionalString(o: Record<string, unknown>, name: string): string | undefined {
  const v = o[name];
  if (v === undefined || v === null) return undefined;
  assertString(v, name, invalid);
  return v;
}

function isJson(res: HttpResponse): boolean {
  const type = (headerValue(res.headers, 'content-type') ?? '').split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]*\+json$/.test(type);
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

function contractError(code: ErrorCode, message: string): IdcliError {
  return new IdcliError(code, message, ExitCode.CONTRACT);
}

function missing(field: string): IdcliError {
  return contractError('CONTRACT_TOKEN_FIELD_MISSING', `the token response ${WHERE} has no ${field}`);
}

function invalid(field: string): IdcliError {
  return contractError('CONTRACT_TOKEN_FIELD_INVALID', `the token response ${WHERE} has an invalid ${field}`);
}

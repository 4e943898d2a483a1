// POST /oauth/token: the code exchange (RFC 6749 §4.1.3, RFC 7636 §4.5) and the Serial PKCE refresh.
import type { Core, Exchange } from './core.js';
import type { GrantResult } from './grants.js';
import { formRecord, json, mediaType, type Params, parseParams, readBody, type Reply } from './http-io.js';
import { isCodeChallenge, isCodeVerifier } from './pkce.js';

// RFC 6749 §5.1: token responses and errors must never be cached.
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

class TokenError extends Error {
  constructor(
    readonly code: string,
    readonly description: string,
    readonly status = 400,
    readonly reuse = false,
  ) {
    super(description);
  }
}

/** Whether an Accept header admits JSON; no header admits anything (RFC 9110 §12.5.1). */
export function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined) return true;
  return accept.split(',').some((range) => {
    const [type, ...params] = range.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((x) => x.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) return false;
    return type === 'application/json' || type === 'application/*' || type === '*/*';
  });
}

function required(p: Params, name: string): string {
  const value = p.get(name);
  if (value === undefined) throw new TokenError('invalid_request', `${name} is required.`);
  return value;
}

function verifier(p: Params): string {
  const v = required(p, 'code_verifier');
  if (!isCodeVerifier(v)) {
    throw new TokenError('invalid_request', 'code_verifier must be 43 to 128 unreserved characters (RFC 7636 §4.1).');
  }
  return v;
}

/** code_challenge and code_challenge_method travel together; only S256 with a well-formed digest. */
function nextChallenge(p: Params, mandatory: boolean): string | null {
  const challenge = p.get('code_challenge');
  const method = p.get('code_challenge_method');
  if (challenge === undefined && method === undefined && !mandatory) return null;
  if (challenge === undefined) throw new TokenError('invalid_request', 'code_challenge is required.');
  if (method === undefined) throw new TokenError('invalid_request', 'code_challenge_method is required.');
  if (method !== 'S256') throw new TokenError('invalid_request', 'Only code_challenge_method=S256 is supported.');
  if (!isCodeChallenge(challenge)) {
    throw new TokenError('invalid_request', 'code_challenge must be the 43-character BASE64URL of a SHA-256 digest.');
  }
  return challenge;
}

function grant(core: Core, ex: Exchange, p: Params): GrantResult {
  if (p.duplicates.length > 0) {
    throw new TokenError('invalid_request', `${p.duplicates[0]} was sent more than once (RFC 6749 §3.2).`);
  }
  // This is a public client (RFC 6749 §2.1): any attempt at client authentication is a client bug.
  if (p.has('client_secret') || ex.req.headers.authorization !== undefined) {
    throw new TokenError('invalid_request', 'This is a public client: no client_secret or client authentication.');
  }
  const grantType = required(p, 'grant_type');
  const clientId = required(p, 'client_id');
  const client = core.directory.client(clientId);
  if (!client) throw new TokenError('invalid_client', 'The client is unknown.', 401);
  if (grantType === 'authorization_code') {
    const code = required(p, 'code');
    const redirectUri = required(p, 'redirect_uri');
    const v = verifier(p);
    return core.grants.exchangeCode({
      code,
      clientId,
      redirectUri,
      verifier: v,
      nextChallenge: nextChallenge(p, false),
    });
  }
  if (grantType === 'refresh_token') {
    const refreshToken = required(p, 'refresh_token');
    const v = verifier(p);
    const challenge = nextChallenge(p, true) as string;
    return core.grants.refresh({
      refreshToken,
      clientId,
      verifier: v,
      nextChallenge: challenge,
      scope: p.get('scope'),
    });
  }
  throw new TokenError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
}

export async function handleToken(core: Core, ex: Exchange): Promise<Reply> {
  const body = await readBody(ex.req);
  const p = parseParams(body?.toString('utf8') ?? '', true);
  const isForm = mediaType(ex.req.headers['content-type']) === 'application/x-www-form-urlencoded';
  if (isForm) {
    ex.log.form = formRecord(p);
    for (const [name, value] of p.entries) if (name === 'code_verifier' && value !== '') core.remember(value);
  }
  const event = (ok: boolean, error?: string, reuse?: boolean) => {
    core.tokenEvents.push({
      grant: (isForm && p.get('grant_type')) || '',
      ok,
      ...(error === undefined ? {} : { error }),
      ...(reuse ? { reuse } : {}),
      time: core.now(),
    });
  };
  try {
    if (body === null) throw new TokenError('invalid_request', 'The request body is too large.', 413);
    if (!isForm) {
      throw new TokenError('invalid_request', 'Content-Type must be application/x-www-form-urlencoded.');
    }
    if (!acceptsJson(ex.req.headers.accept)) {
      throw new TokenError('invalid_request', 'The token endpoint answers application/json only.', 406);
    }
    const result = grant(core, ex, p);
    if (!result.ok) throw new TokenError(result.error, result.description, 400, result.reuse ?? false);
    event(true);
    return json(200, result.body, NO_STORE);
  } catch (err) {
    if (!(err instanceof TokenError)) throw err;
    event(false, err.code, err.reuse);
    return json(err.status, { error: err.code, error_description: err.description }, NO_STORE);
  }
}

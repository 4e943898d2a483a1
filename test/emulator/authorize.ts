// GET /oauth/authorize and the sign-in / sign-up forms it leads to (RFC 6749 §4.1.1-§4.1.2, RFC 7636 §4.3).
import type { Core, Exchange, Transaction } from './core.js';
import { isScopeToken, isUuid, redirectUriMatches, type StoredUser } from './directory.js';
import { errorPage, pickLocale, signInPage, signUpPage, t, type Locale } from './html.js';
import { html, mediaType, parseCookies, parseParams, readBody, redirect, type Reply } from './http-io.js';
import { isCodeChallenge } from './pkce.js';
import { randomToken } from './tokens.js';

export const SSO_COOKIE = 'idemu_sso';
const TX_TTL_MS = 30 * 60 * 1000;
const PROMPTS = new Set(['none', 'login', 'create']);

function appendQuery(uri: string, pairs: Array<[string, string | undefined]>): string {
  const q = new URLSearchParams();
  for (const [k, v] of pairs) if (v !== undefined) q.append(k, v);
  return `${uri}${uri.includes('?') ? '&' : '?'}${q.toString()}`;
}

function iss(core: Core): string | undefined {
  return core.sendIss ? core.baseUrl : undefined;
}

/** RFC 6749 §4.1.2.1: once redirect_uri is trusted, errors travel back to it (RFC 9207 adds iss). */
function errorRedirect(core: Core, uri: string, state: string | undefined, error: string, description: string): Reply {
  return redirect(
    appendQuery(uri, [
      ['error', error],
      ['error_description', description],
      ['state', state],
      ['iss', iss(core)],
    ]),
  );
}

function codeRedirect(core: Core, tx: Transaction, user: StoredUser, authTime: number, cookie?: string): Reply {
  const code = core.grants.issueCode({
    clientId: tx.client.id,
    redirectUri: tx.redirectUri,
    challenge: tx.challenge,
    user,
    scope: tx.scope,
    nonce: tx.nonce,
    authTime,
  });
  const location = appendQuery(tx.redirectUri, [
    ['code', code],
    ['state', tx.state],
    ['iss', iss(core)],
  ]);
  return redirect(location, cookie ? { 'set-cookie': `${SSO_COOKIE}=${cookie}; Path=/; HttpOnly; SameSite=Lax` } : {});
}

function errorHtml(locale: Locale, key: Parameters<typeof errorPage>[1]): Reply {
  return html(400, errorPage(locale, key));
}

function scopeProblem(scope: string | undefined, clientName: string): string | null {
  if (scope === undefined) return 'scope is required.';
  const tokens = scope.split(' ');
  if (!tokens.every(isScopeToken)) return 'scope must be scope tokens separated by single spaces (RFC 6749 §3.3).';
  if (!tokens.includes('openid')) return 'scope must contain openid.';
  if (!tokens.includes(clientName)) return 'scope must contain the client name.';
  return null;
}

export function handleAuthorize(core: Core, ex: Exchange): Reply {
  const p = parseParams(ex.query, true);
  const locale = pickLocale(p.get('ui_locales'));
  // Until client_id and redirect_uri are trusted, never redirect: that would make an open redirector
  // (RFC 6749 §4.1.2.1, §10.15). The user sees an error page instead.
  const clientId = p.get('client_id');
  const client = clientId && isUuid(clientId) ? core.directory.client(clientId) : undefined;
  if (!client || p.duplicates.includes('client_id')) return errorHtml(locale, 'unknownClient');
  const redirectUri = p.get('redirect_uri');
  if (!redirectUri || p.duplicates.includes('redirect_uri') || !redirectUriMatches(client, redirectUri)) {
    return errorHtml(locale, 'badRedirect');
  }
  const state = p.get('state');
  const fail = (error: string, description: string) => errorRedirect(core, redirectUri, state, error, description);
  const dup = p.duplicates[0];
  if (dup !== undefined) return fail('invalid_request', `${dup} was sent more than once.`);
  const responseType = p.get('response_type');
  if (responseType === undefined) return fail('invalid_request', 'response_type is required.');
  if (responseType !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.');
  const scope = p.get('scope');
  const scopeError = scopeProblem(scope, client.name);
  if (scopeError !== null || scope === undefined) return fail('invalid_scope', scopeError ?? 'scope is required.');
  // RFC 7636 §4.4.1: a server that requires PKCE answers invalid_request when the challenge is missing.
  const challenge = p.get('code_challenge');
  if (challenge === undefined) return fail('invalid_request', 'code_challenge is required.');
  const method = p.get('code_challenge_method');
  if (method === undefined) return fail('invalid_request', 'code_challenge_method is required.');
  if (method !== 'S256') return fail('invalid_request', 'Only code_challenge_method=S256 is supported.');
  if (!isCodeChallenge(challenge)) {
    return fail('invalid_request', 'code_challenge must be the 43-character BASE64URL of a SHA-256 digest.');
  }
  const prompt = p.get('prompt');
  if (prompt !== undefined && !PROMPTS.has(prompt)) {
    return fail('invalid_request', 'prompt must be one of none, login, create.');
  }

  const tx: Transaction = {
    client,
    redirectUri,
    state,
    challenge,
    scope,
    nonce: p.get('nonce'),
    locale,
    loginHint: p.get('login_hint') ?? '',
    createdAt: core.now(),
  };
  const session = core.directory.session(parseCookies(ex.req.headers.cookie).get(SSO_COOKIE));
  const sessionUser = session ? core.directory.user(session.email) : undefined;
  if (prompt === 'none' || prompt === undefined) {
    if (session && sessionUser) return codeRedirect(core, tx, sessionUser, session.authTime);
    if (prompt === 'none') return fail('login_required', 'No single sign-on session; sign-in needs the user.');
  }
  const txId = randomToken();
  core.transactions.set(txId, tx);
  const form = { locale, tx: txId, clientName: client.name, email: tx.loginHint };
  return html(200, prompt === 'create' ? signUpPage(form) : signInPage(form));
}

async function readForm(core: Core, ex: Exchange) {
  if (mediaType(ex.req.headers['content-type']) !== 'application/x-www-form-urlencoded') return null;
  const body = await readBody(ex.req);
  if (body === null) return null;
  const p = parseParams(body.toString('utf8'), true);
  ex.log.form = Object.fromEntries(p.entries.filter(([k]) => k !== 'password'));
  const txId = p.get('tx');
  const tx = txId === undefined ? undefined : core.transactions.get(txId);
  if (txId === undefined || !tx || core.now() >= tx.createdAt + TX_TTL_MS) return { p, tx: undefined, txId };
  return { p, tx, txId };
}

/** Both forms: the Cancel button answers access_denied (RFC 6749 §4.1.2.1). */
async function handleForm(core: Core, ex: Exchange, kind: 'login' | 'signup'): Promise<Reply> {
  const form = await readForm(core, ex);
  if (!form) return errorHtml('en', 'badForm');
  const { p, tx, txId } = form;
  if (!tx || txId === undefined) return errorHtml('en', 'unknownTransaction');
  const action = p.get('action') ?? kind;
  if (action === 'cancel') {
    core.transactions.delete(txId);
    return errorRedirect(core, tx.redirectUri, tx.state, 'access_denied', 'The user cancelled the sign-in.');
  }
  if (action !== kind) return errorHtml(tx.locale, 'badForm');
  const email = (p.get('email') ?? '').trim();
  const password = p.get('password') ?? '';
  const page = { locale: tx.locale, tx: txId, clientName: tx.client.name, email };
  let user: StoredUser | null;
  if (kind === 'login') {
    user = core.directory.authenticate(email, password);
    if (!user) return html(200, signInPage({ ...page, error: t(tx.locale, 'wrongPassword') }));
  } else {
    const name = (p.get('name') ?? '').trim();
    if (!/^[^\s@]+@[^\s@]+$/.test(email) || name === '' || password.length < 8) {
      return html(200, signUpPage({ ...page, name, error: t(tx.locale, 'signUpInvalid') }));
    }
    if (core.directory.user(email)) {
      return html(200, signUpPage({ ...page, name, error: t(tx.locale, 'accountExists') }));
    }
    user = core.directory.addUser({ email, name, password });
  }
  core.transactions.delete(txId);
  const now = core.now();
  return codeRedirect(core, tx, user, now, core.directory.openSession(user.email, now));
}

export function handleLogin(core: Core, ex: Exchange): Promise<Reply> {
  return handleForm(core, ex, 'login');
}

export function handleSignup(core: Core, ex: Exchange): Promise<Reply> {
  return handleForm(core, ex, 'signup');
}

/** The authorization request (RFC 6749 §4.1.1 + RFC 7636 §4.3), built as a pure function of its inputs. */

/** The `prompt` values of OpenID Connect Core §3.1.2.1 that idcli offers, and `create` (Initiating User Registration). */
export const PROMPTS = ['none', 'login', 'create'] as const;
export type Prompt = (typeof PROMPTS)[number];

export interface AuthorizeParams {
  baseUrl: string;
  clientId: string;
  redirectUri: string;
  scope: string;
  codeChallenge: string;
  state: string;
  prompt?: Prompt;
  loginHint?: string;
  uiLocales?: string;
}

export function tokenEndpoint(baseUrl: string): string {
  return `${baseUrl}/oauth/token`;
}

/** The service requires `openid` and the client name; extra scopes follow, without duplicates (RFC 6749 §3.3). */
export function buildScope(clientName: string, extra?: string): string {
  const scopes = ['openid', clientName, ...(extra ?? '').split(/\s+/)].filter((s) => s !== '');
  return [...new Set(scopes)].join(' ');
}

export function buildAuthorizeUrl(p: AuthorizeParams): URL {
  const url = new URL(`${p.baseUrl}/oauth/authorize`);
  const q = url.searchParams;
  q.set('client_id', p.clientId);
  q.set('response_type', 'code');
  q.set('scope', p.scope);
  q.set('redirect_uri', p.redirectUri);
  q.set('code_challenge', p.codeChallenge);
  q.set('code_challenge_method', 'S256');
  q.set('state', p.state);
  if (p.prompt !== undefined) q.set('prompt', p.prompt);
  if (p.loginHint !== undefined && p.loginHint !== '') q.set('login_hint', p.loginHint);
  if (p.uiLocales !== undefined && p.uiLocales !== '') q.set('ui_locales', p.uiLocales);
  return url;
}

import { describe, expect, it } from 'vitest';
import { IdcliError } from '../../src/errors.js';
import type { HttpResponse } from '../../src/http/types.js';
import { codeGrantForm, OAuthError, processTokenResponse, refreshGrantForm } from '../../src/oauth/token-client.js';

const res = (status: number, body: string, type: string | null = 'application/json'): HttpResponse => ({
  status,
  headers: type === null ? {} : { 'content-type': type },
  body: Buffer.from(body),
});

function failure(r: HttpResponse, sent: string[] = []): IdcliError {
  try {
    processTokenResponse(r, sent);
  } catch (err) {
    expect(err).toBeInstanceOf(IdcliError);
    return err as IdcliError;
  }
  throw new Error('expected a failure');
}

describe('request builders', () => {
  it('builds the code exchange with a new challenge and no secret', () => {
    const f = codeGrantForm({
      code: 'c',
      clientId: 'id',
      redirectUri: 'http://127.0.0.1:1/cb',
      codeVerifier: 'v',
      nextChallenge: 'n',
    });
    expect(Object.fromEntries(f)).toEqual({
      grant_type: 'authorization_code',
      code: 'c',
      client_id: 'id',
      redirect_uri: 'http://127.0.0.1:1/cb',
      code_verifier: 'v',
      code_challenge: 'n',
      code_challenge_method: 'S256',
    });
  });

  it('builds the Serial PKCE refresh', () => {
    const f = refreshGrantForm({ refreshToken: 'r', clientId: 'id', codeVerifier: 'v', nextChallenge: 'n' });
    expect(Object.fromEntries(f)).toEqual({
      grant_type: 'refresh_token',
      refresh_token: 'r',
      client_id: 'id',
      code_verifier: 'v',
      code_challenge: 'n',
      code_challenge_method: 'S256',
    });
    expect(f.has('client_secret')).toBe(false);
  });
});

describe('processTokenResponse', () => {
  it('reads a full token response', () => {
    const t = processTokenResponse(
      res(
        200,
        JSON.stringify({
          access_token: 'at',
          token_type: 'Bearer',
          expires_in: 3600,
          refresh_token: 'rt',
          id_token: 'it',
          scope: 'openid x',
        }),
        'application/json; charset=utf-8',
      ),
    );
    expect(t).toEqual({
      accessToken: 'at',
      tokenType: 'Bearer',
      expiresIn: 3600,
      refreshToken: 'rt',
      idToken: 'it',
      scope: 'openid x',
    });
  });

  it('accepts a response without refresh token, id token, scope or token_type', () => {
    expect(processTokenResponse(res(200, '{"access_token":"at","expires_in":0}'))).toEqual({
      accessToken: 'at',
      tokenType: 'Bearer',
      expiresIn: 0,
    });
  });

  it('cuts an expires_in beyond a year to a year, and tells what the server sent', () => {
    const year = 365 * 24 * 60 * 60;
    const at = (n: string) => processTokenResponse(res(200, `{"access_token":"a","expires_in":${n}}`));
    expect(at(String(year))).toEqual({ accessToken: 'a', tokenType: 'Bearer', expiresIn: year });
    expect(at(String(year + 1))).toMatchObject({ expiresIn: year, sentExpiresIn: year + 1 });
    expect(at('9007199254740991')).toMatchObject({ expiresIn: year, sentExpiresIn: Number.MAX_SAFE_INTEGER });
    expect(at('1e300')).toMatchObject({ expiresIn: year, sentExpiresIn: 1e300 });
  });

  it.each([
    ['HTML', res(200, '<html>hi</html>', 'text/html'), 'CONTRACT_TOKEN_NOT_JSON', ''],
    ['an empty body', res(200, ''), 'CONTRACT_TOKEN_EMPTY_BODY', ''],
    ['no content type', res(200, '{"access_token":"a","expires_in":1}', null), 'CONTRACT_TOKEN_NOT_JSON', ''],
    ['malformed JSON', res(200, '{"access_token":'), 'CONTRACT_TOKEN_MALFORMED_JSON', ''],
    ['a JSON array', res(200, '[]'), 'CONTRACT_TOKEN_NOT_AN_OBJECT', ''],
    ['JSON null', res(200, 'null'), 'CONTRACT_TOKEN_NOT_AN_OBJECT', ''],
    ['no access_token', res(200, '{"expires_in":1}'), 'CONTRACT_TOKEN_FIELD_MISSING', 'access_token'],
    [
      'a numeric access_token',
      res(200, '{"access_token":5,"expires_in":1}'),
      'CONTRACT_TOKEN_FIELD_MISSING',
      'access_token',
    ],
    [
      'an access_token with a newline',
      res(200, '{"access_token":"a\\nb","expires_in":1}'),
      'CONTRACT_TOKEN_FIELD_INVALID',
      'access_token',
    ],
    ['no expires_in', res(200, '{"access_token":"a"}'), 'CONTRACT_TOKEN_FIELD_MISSING', 'expires_in'],
    [
      'a string expires_in',
      res(200, '{"access_token":"a","expires_in":"60"}'),
      'CONTRACT_TOKEN_FIELD_INVALID',
      'expires_in',
    ],
    [
      'a negative expires_in',
      res(200, '{"access_token":"a","expires_in":-1}'),
      'CONTRACT_TOKEN_FIELD_INVALID',
      'expires_in',
    ],
    [
      'a numeric refresh_token',
      res(200, '{"access_token":"a","expires_in":1,"refresh_token":7}'),
      'CONTRACT_TOKEN_FIELD_INVALID',
      'refresh_token',
    ],
    [
      'a fractional expires_in',
      res(200, '{"access_token":"a","expires_in":1.5}'),
      'CONTRACT_TOKEN_FIELD_INVALID',
      'expires_in',
    ],
    [
      'a refresh_token with ESC',
      res(200, '{"access_token":"a","expires_in":1,"refresh_token":"r\\u001b[2J"}'),
      'CONTRACT_TOKEN_FIELD_INVALID',
      'refresh_token',
    ],
    [
      'an id_token with a tab',
      res(200, '{"access_token":"a","expires_in":1,"id_token":"a\\tb"}'),
      'CONTRACT_TOKEN_FIELD_INVALID',
      'id_token',
    ],
    [
      'a token_type with a CR',
      res(200, '{"access_token":"a","expires_in":1,"token_type":"x\\r"}'),
      'CONTRACT_TOKEN_FIELD_INVALID',
      'token_type',
    ],
    [
      'a scope with a C1 control',
      res(200, '{"access_token":"a","expires_in":1,"scope":"a\\u009bb"}'),
      'CONTRACT_TOKEN_FIELD_INVALID',
      'scope',
    ],
    ['a redirect', res(302, '', null), 'CONTRACT_TOKEN_REDIRECT', ''],
  ])('calls %s a broken contract (exit 5)', (_what, r, code, field) => {
    const err = failure(r);
    expect(err.exitCode).toBe(5);
    expect(err.code).toBe(code);
    // The field at fault is named, so the service's owner knows what to fix.
    expect(err.message).toContain(field);
  });

  it('types invalid_grant as an OAuth error with exit 3', () => {
    const err = failure(res(400, '{"error":"invalid_grant","error_description":"refresh token abc is spent"}'));
    expect(err).toBeInstanceOf(OAuthError);
    expect((err as OAuthError).oauthError).toBe('invalid_grant');
    expect(err.code).toBe('OAUTH_INVALID_GRANT');
    expect(err.exitCode).toBe(3);
    expect(err.message).not.toContain('abc');
  });

  it('reports a misregistered client by code only, as a configuration error (exit 2)', () => {
    const err = failure(res(401, '{"error":"invalid_client","error_description":"secret-ish detail"}'));
    expect(err.exitCode).toBe(2);
    expect(err.oauthError).toBe('invalid_client');
    expect(err.code).toBe('OAUTH_CLIENT_REFUSED');
    expect(err.hint).toMatch(/client-id and client-name/);
    expect(`${err.message} ${err.hint}`).not.toContain('secret-ish');
    expect(failure(res(400, '{"error":"unauthorized_client"}')).exitCode).toBe(2);
  });

  it('reports other OAuth errors by code only (exit 4)', () => {
    const err = failure(res(400, '{"error":"invalid_scope","error_description":"secret-ish detail"}'));
    expect(err.exitCode).toBe(4);
    expect(err.oauthError).toBe('invalid_scope');
    expect(err.code).toBe('OAUTH_REQUEST_REFUSED');
    expect(`${err.message} ${err.hint}`).not.toContain('secret-ish');
  });

  it('reports 5xx and non-JSON errors without the body', () => {
    const a = failure(res(503, '<h1>down: token=xyz</h1>', 'text/html'));
    expect(a.exitCode).toBe(4);
    expect(a.code).toBe('NETWORK_TOKEN_ENDPOINT_STATUS');
    expect(a.message).toBe('the token endpoint answered HTTP 503');
    const b = failure(res(500, '{"error":"server_error"}'));
    expect(b.code).toBe('NETWORK_TOKEN_ENDPOINT_STATUS');
    expect(b.message).toBe('the token endpoint answered HTTP 500, server_error');
  });

  it('never echoes a sent secret or a non-code value as the error code', () => {
    const sent = 'refreshtokenvalue';
    const echoed = failure(res(400, JSON.stringify({ error: sent })), [sent]);
    expect(echoed.message).not.toContain(sent);
    const weird = failure(res(400, JSON.stringify({ error: 'Bad\u001b[2J' })));
    expect(weird.message).toBe('the token endpoint answered HTTP 400');
  });
});

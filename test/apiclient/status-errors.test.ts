import { describe, expect, it } from 'vitest';
import type { ApiResponse } from '../../src/apiclient/client.js';
import { responseError } from '../../src/apiclient/status-errors.js';
import { IdcliError } from '../../src/errors.js';

const URL = 'https://api.example.com/v1/users?access_token=SECRET1';
const answer = (status: number, more: Partial<ApiResponse> = {}): ApiResponse => ({
  status,
  headers: {},
  body: Buffer.from('{"detail":"from the server"}'),
  retries: 0,
  ...more,
});

/** The error as an IdcliError, failing the test when it is anything else. */
function idcli(err: unknown): IdcliError {
  if (!(err instanceof IdcliError)) throw new Error(`expected an IdcliError, got ${String(err)}`);
  return err;
}

describe('responseError: one reading of every API answer', () => {
  it('a 2xx is no error', () => {
    expect(responseError('GET', URL, answer(200))).toBeUndefined();
    expect(responseError('GET', URL, answer(204))).toBeUndefined();
  });

  it('any other status: its standard reason phrase, the URL redacted, never the body', () => {
    const err = responseError('GET', URL, answer(404, { retries: 2 }));
    expect(idcli(err).message).toMatch(
      /^GET https:\/\/api\.example\.com\/v1\/users\?access_token=\S+ failed: HTTP 404 Not Found after 2 retries$/,
    );
    expect(idcli(err).message).not.toContain('SECRET1');
    expect(idcli(err).message).not.toContain('from the server');
    expect(idcli(err).exitCode).toBe(4);
    expect(idcli(err).code).toBe('API_STATUS');
    expect(idcli(responseError('GET', URL, answer(599))).message).toMatch(/ failed: HTTP 599$/);
  });

  it('a 401 that was not repeated ends with why: the refresh error itself, or the body that cannot go out again', () => {
    const refresh = new IdcliError('NOT_LOGGED_IN', 'not signed in', 3);
    expect(responseError('GET', URL, answer(401, { unrepeated: { because: 'refresh', error: refresh } }))).toBe(
      refresh,
    );
    const body = idcli(responseError('POST', URL, answer(401, { unrepeated: { because: 'body' } }), 'stdin'));
    expect(body.code).toBe('API_UNAUTHORIZED_UNREPEATED');
    expect(body.message).toContain('its body from stdin');
    expect(body.exitCode).toBe(3);
    const repeated = idcli(responseError('GET', URL, answer(401)));
    expect(repeated.code).toBe('API_UNAUTHORIZED');
  });

  it("the server's status travels on the error it refused with, and only on that", () => {
    for (const status of [301, 400, 401, 404, 422, 503])
      expect(idcli(responseError('GET', URL, answer(status))).status).toBe(status);
    const refresh = new IdcliError('NOT_LOGGED_IN', 'not signed in', 3);
    expect(
      idcli(responseError('GET', URL, answer(401, { unrepeated: { because: 'refresh', error: refresh } }))).status,
    ).toBeUndefined();
    expect(idcli(responseError('POST', URL, answer(401, { unrepeated: { because: 'body' } }))).status).toBeUndefined();
  });
});

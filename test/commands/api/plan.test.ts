import { describe, expect, it } from 'vitest';
import { type ApiFlags, fieldsJson, parseHeaders, planRequest } from '../../../src/commands/api/plan.js';
import { thrown } from '../../support/thrown.js';

const BASE = 'https://api.example.com/v1';
const flags = (f: Partial<ApiFlags>): ApiFlags => ({
  target: 'users/1',
  method: undefined,
  header: [],
  field: [],
  input: undefined,
  ...f,
});
const usage = (f: Partial<ApiFlags>) => thrown(() => planRequest(flags(f), BASE), 2);

describe('planRequest', () => {
  it('GET by default, resolved like list, with JSON accepted and no content type', () => {
    expect(planRequest(flags({}), BASE)).toEqual({
      method: 'GET',
      url: 'https://api.example.com/v1/users/1',
      headers: { accept: 'application/json', 'user-agent': 'idcli' },
      body: { kind: 'none' },
    });
    expect(planRequest(flags({ target: '/other?q=a%20b#frag' }), BASE).url).toBe(
      'https://api.example.com/other?q=a%20b',
    );
  });
  it('POST when a body is given, unless -X says otherwise; the method upper-cased', () => {
    const p = planRequest(flags({ field: ['name=Ada', 'note=a=b'] }), BASE);
    expect(p.method).toBe('POST');
    expect(p.body).toEqual({ kind: 'text', text: '{"name":"Ada","note":"a=b"}' });
    expect(p.headers['content-type']).toBe('application/json');
    expect(planRequest(flags({ input: '-', method: 'put' }), BASE)).toMatchObject({
      method: 'PUT',
      body: { kind: 'file', path: '-' },
    });
  });
  it('-H adds fields, overrides the defaults and combines repeats', () => {
    const p = planRequest(
      flags({ input: 'b.json', header: ['Content-Type: text/plain', 'X-Tag: a', 'x-tag:b', 'Accept:  */*  '] }),
      BASE,
    );
    expect(p.headers).toEqual({ accept: '*/*', 'user-agent': 'idcli', 'content-type': 'text/plain', 'x-tag': 'a, b' });
  });
  it('refuses conflicts and bad values before anything is sent', () => {
    expect(usage({ field: ['a=1'], input: 'x' }).code).toBe('USAGE_CONFLICTING_OPTIONS');
    expect(usage({ target: 'https://evil.example.com/v1/users' }).code).toBe('TARGET_CROSS_ORIGIN');
    expect(usage({ header: ['Authorization: Bearer x'] }).code).toBe('API_HEADER_REFUSED');
    expect(usage({ header: ['authorization:Basic eA=='] }).code).toBe('API_HEADER_REFUSED');
    expect(usage({ header: ['Host: elsewhere'] }).code).toBe('API_HEADER_REFUSED');
    expect(usage({ header: ['no colon'] }).code).toBe('API_HEADER_INVALID');
    expect(usage({ header: ['X-A: 1\r\nAuthorization: x'] }).code).toBe('API_HEADER_INVALID');
    expect(usage({ method: 'GET /x' }).code).toBe('API_METHOD_INVALID');
    expect(usage({ method: 'CONNECT' }).code).toBe('API_METHOD_REFUSED');
    expect(usage({ method: 'trace' }).code).toBe('API_METHOD_REFUSED');
    expect(usage({ input: '' }).code).toBe('USAGE_OPTION_VALUE_MISSING');
    expect(usage({ target: ' ' }).code).toBe('TARGET_MISSING');
  });
});

describe('fieldsJson and parseHeaders', () => {
  it('builds an object of strings in order; refuses a missing key or a key twice', () => {
    expect(fieldsJson(['b=2', 'a=', '__proto__=x'])).toBe('{"b":"2","a":"","__proto__":"x"}');
    expect(thrown(() => fieldsJson(['novalue']), 2).code).toBe('API_FIELD_INVALID');
    expect(thrown(() => fieldsJson(['=v']), 2).code).toBe('API_FIELD_INVALID');
    expect(thrown(() => fieldsJson(['a=1', 'a=2']), 2).code).toBe('API_FIELD_REPEATED');
  });
  it('keeps an empty value', () => {
    expect(parseHeaders(['X-Empty:'])).toEqual({ 'x-empty': '' });
  });
});

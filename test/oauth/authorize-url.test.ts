import { describe, expect, it } from 'vitest';
import { buildAuthorizeUrl, buildScope } from '../../src/oauth/authorize-url.js';
import { uiLocalesFromEnv } from '../../src/oauth/locale.js';

const base = {
  baseUrl: 'https://id.example.com/tenant',
  clientId: '4f9c0a1e-0000-4000-8000-000000000000',
  redirectUri: 'http://127.0.0.1:8765/callback',
  scope: 'openid idcli',
  codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  state: 'st-1',
};

describe('buildAuthorizeUrl', () => {
  it('carries every required parameter under the base path', () => {
    const url = buildAuthorizeUrl(base);
    expect(url.origin + url.pathname).toBe('https://id.example.com/tenant/oauth/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: base.clientId,
      response_type: 'code',
      scope: 'openid idcli',
      redirect_uri: 'http://127.0.0.1:8765/callback',
      code_challenge: base.codeChallenge,
      code_challenge_method: 'S256',
      state: 'st-1',
    });
  });

  it('adds prompt, login_hint and ui_locales only when given', () => {
    const url = buildAuthorizeUrl({ ...base, prompt: 'create', loginHint: 'a+b@example.com', uiLocales: 'fr-FR en' });
    expect(url.searchParams.get('prompt')).toBe('create');
    expect(url.searchParams.get('login_hint')).toBe('a+b@example.com');
    expect(url.searchParams.get('ui_locales')).toBe('fr-FR en');
    expect(url.href).toContain('login_hint=a%2Bb%40example.com');
    const bare = buildAuthorizeUrl({ ...base, loginHint: '', uiLocales: '' });
    expect(bare.searchParams.has('login_hint')).toBe(false);
    expect(bare.searchParams.has('ui_locales')).toBe(false);
    expect(bare.searchParams.has('prompt')).toBe(false);
  });
});

describe('buildScope', () => {
  it('puts openid and the client name first and drops duplicates', () => {
    expect(buildScope('idcli')).toBe('openid idcli');
    expect(buildScope('idcli', '  email  profile openid idcli ')).toBe('openid idcli email profile');
  });
});

describe('uiLocalesFromEnv', () => {
  it('follows LC_ALL > LC_MESSAGES > LANG', () => {
    expect(uiLocalesFromEnv({ LANG: 'fr_FR.UTF-8' })).toBe('fr-FR');
    expect(uiLocalesFromEnv({ LANG: 'fr_FR.UTF-8', LC_MESSAGES: 'de_DE' })).toBe('de-DE');
    expect(uiLocalesFromEnv({ LANG: 'fr_FR.UTF-8', LC_MESSAGES: 'de_DE', LC_ALL: 'pt_BR.UTF-8' })).toBe('pt-BR');
    expect(uiLocalesFromEnv({ LC_ALL: '', LANG: 'es' })).toBe('es');
    expect(uiLocalesFromEnv({ LANG: 'ca_ES.UTF-8@valencia' })).toBe('ca-ES');
  });

  it('says nothing for C, POSIX, garbage or no locale', () => {
    expect(uiLocalesFromEnv({})).toBeUndefined();
    expect(uiLocalesFromEnv({ LANG: 'C.UTF-8' })).toBeUndefined();
    expect(uiLocalesFromEnv({ LC_ALL: 'POSIX' })).toBeUndefined();
    expect(uiLocalesFromEnv({ LANG: '../../etc' })).toBeUndefined();
  });
});

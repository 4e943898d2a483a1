import { userInfo } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_KEYS,
  configDirFor,
  parseConfigFile,
  resolveSettings,
  requireSetting,
  settingsSource,
  validateSetting,
} from '../src/config.js';
import { thrown } from './support/thrown.js';

const UUID = '4f9c0a1e-1234-4abc-8def-0123456789ab';
const file = parseConfigFile(
  JSON.stringify({
    profiles: {
      default: { 'base-url': 'https://file.example.com', 'client-id': UUID, 'client-name': 'from-file', scope: 'a' },
      staging: { 'base-url': 'https://staging.example.com' },
    },
  }),
  'config.json',
);

const usage = (fn: () => unknown) => thrown(fn, 2);

describe('precedence: flag > env > config file > default', () => {
  it('takes the file when nothing else is given', () => {
    const s = resolveSettings({}, { IDCLI_CONFIG_DIR: '/c' }, file);
    expect(s.baseUrl).toBe('https://file.example.com');
    expect(s.clientName).toBe('from-file');
    expect(s.profile).toBe('default');
    expect(s.credentialStore).toBe('auto');
    expect(s.keychainService).toBe('idcli');
    expect(s.apiBaseUrl).toBeUndefined();
  });
  it('env beats the file', () => {
    const s = resolveSettings({}, { IDCLI_BASE_URL: 'https://env.example.com', IDCLI_CONFIG_DIR: '/c' }, file);
    expect(s.baseUrl).toBe('https://env.example.com');
    expect(s.clientId).toBe(UUID);
  });
  it('a flag beats env and file', () => {
    const s = resolveSettings(
      { baseUrl: 'https://flag.example.com' },
      { IDCLI_BASE_URL: 'https://env.example.com', IDCLI_CONFIG_DIR: '/c' },
      file,
    );
    expect(s.baseUrl).toBe('https://flag.example.com');
  });
  it('an empty env variable does not hide the file', () => {
    expect(resolveSettings({}, { IDCLI_BASE_URL: '', IDCLI_CONFIG_DIR: '/c' }, file).baseUrl).toBe(
      'https://file.example.com',
    );
  });
  it('the profile comes from the flag, then IDCLI_PROFILE', () => {
    expect(resolveSettings({}, { IDCLI_PROFILE: 'staging' }, file).baseUrl).toBe('https://staging.example.com');
    expect(resolveSettings({ profile: 'default' }, { IDCLI_PROFILE: 'staging' }, file).baseUrl).toBe(
      'https://file.example.com',
    );
    expect(resolveSettings({ profile: 'none' }, {}, file).baseUrl).toBeUndefined();
  });
  it('reads the store mode, keychain service and access token from env', () => {
    const s = resolveSettings(
      {},
      { IDCLI_CREDENTIAL_STORE: 'file', IDCLI_KEYCHAIN_SERVICE: 'svc', IDCLI_ACCESS_TOKEN: 'tok' },
      file,
    );
    expect([s.credentialStore, s.keychainService, s.accessToken]).toEqual(['file', 'svc', 'tok']);
    usage(() => resolveSettings({}, { IDCLI_CREDENTIAL_STORE: 'vault' }, file));
  });
  it('rejects odd profile names', () => {
    usage(() => resolveSettings({ profile: '../x' }, {}, file));
    usage(() => resolveSettings({ profile: '' }, {}, file));
    usage(() => resolveSettings({}, { IDCLI_PROFILE: '__proto__' }, file));
  });
  it('an empty IDCLI_PROFILE is unset, like every empty IDCLI_ variable', () => {
    expect(resolveSettings({}, { IDCLI_PROFILE: '' }, file).profile).toBe('default');
    expect(resolveSettings({}, { IDCLI_PROFILE: '' }, file).baseUrl).toBe('https://file.example.com');
    expect(settingsSource({}, { IDCLI_PROFILE: '' }).profile()).toBe('default');
    const s = resolveSettings(
      {},
      {
        IDCLI_CREDENTIAL_STORE: '',
        IDCLI_KEYCHAIN_SERVICE: '',
        IDCLI_ACCESS_TOKEN: '',
        IDCLI_HTTP_TIMEOUT: '',
        IDCLI_HTTP_COMPRESSION: '',
        IDCLI_CONFIG_DIR: '',
        HOME: '/h',
        XDG_CONFIG_HOME: '/xdg',
      },
      file,
    );
    expect([s.credentialStore, s.keychainService, s.accessToken, s.httpTimeoutMs]).toEqual([
      'auto',
      'idcli',
      undefined,
      300_000,
    ]);
    expect(s.configDir).toBe(configDirFor({ XDG_CONFIG_HOME: '/xdg', HOME: '/h' }));
  });
  it('a profile named like an Object.prototype member is an ordinary, absent profile', () => {
    const empty = parseConfigFile('{}', 'c.json');
    for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      const s = resolveSettings({ profile: name }, {}, empty);
      expect(s.profile).toBe(name);
      expect(s.baseUrl).toBeUndefined();
      expect(empty.profiles[name]).toBeUndefined();
    }
  });
});

describe('validation', () => {
  it('base-url: https, or http on loopback only; trailing slash dropped', () => {
    expect(validateSetting('base-url', 'https://id.example.com/')).toBe('https://id.example.com');
    expect(validateSetting('base-url', 'https://id.example.com/tenant/')).toBe('https://id.example.com/tenant');
    expect(validateSetting('base-url', 'http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(validateSetting('base-url', 'http://localhost:8080')).toBe('http://localhost:8080');
    usage(() => validateSetting('base-url', 'http://id.example.com'));
    usage(() => validateSetting('base-url', 'id.example.com'));
    usage(() => validateSetting('base-url', 'https://u:p@id.example.com'));
    usage(() => validateSetting('base-url', 'https://id.example.com/?x=1'));
  });
  it('client-id must be a UUID', () => {
    expect(validateSetting('client-id', UUID)).toBe(UUID);
    usage(() => validateSetting('client-id', 'abc'));
  });
  it('client-name must be one scope token', () => {
    expect(validateSetting('client-name', 'my-app')).toBe('my-app');
    usage(() => validateSetting('client-name', 'my app'));
    usage(() => validateSetting('client-name', 'a"b'));
  });
  it('redirect-uri: loopback http with an explicit port, kept byte for byte', () => {
    for (const ok of [
      'http://127.0.0.1:8765/callback',
      'http://[::1]:8765/cb',
      'http://localhost:0/callback',
      'http://127.0.0.1:8765',
    ]) {
      expect(validateSetting('redirect-uri', ok)).toBe(ok);
    }
    for (const bad of [
      'https://127.0.0.1:8765/cb',
      'http://example.com:8765/cb',
      'http://127.0.0.1/cb',
      'http://127.0.0.1:99999/cb',
      'http://127.0.0.1:1/cb#x',
      'http://127.0.0.2:8765/cb',
      'HTTP://127.0.0.1:8765/cb',
    ]) {
      usage(() => validateSetting('redirect-uri', bad));
    }
  });
  it('a text or URL setting holding a control character is refused from any source', () => {
    for (const key of ['scope', 'ui-locales', 'base-url', 'api-base-url', 'issuer'] as const) {
      const err = usage(() => validateSetting(key, 'https://id.example.com/\u001b[2J'));
      expect(err.message).toBe(`${key} must not hold control characters`);
    }
    const env = { IDCLI_SCOPE: 'read\u0007' };
    expect(usage(() => resolveSettings({}, env, parseConfigFile('{}', 'c.json'))).message).toBe(
      'scope must not hold control characters',
    );
    // Blanks around a value (a newline from `$(cat file)`) are dropped, as before.
    expect(validateSetting('scope', ' read:users\n')).toBe('read:users');
  });
  it('requireSetting names every way to set a missing value', () => {
    const err = usage(() => requireSetting(resolveSettings({ profile: 'none' }, {}, file), 'clientId'));
    expect(err.code).toBe('SETTING_MISSING');
    expect(err.hint).toContain('--client-id');
    expect(err.hint).toContain('IDCLI_CLIENT_ID');
    expect(err.hint).toContain('idcli config set client-id');
  });
});

describe('config file', () => {
  it('rejects invalid JSON, unknown keys and non-string values', () => {
    usage(() => parseConfigFile('{', 'c.json'));
    usage(() => parseConfigFile('[]', 'c.json'));
    usage(() => parseConfigFile('{"profiles":{"default":{"bogus":"x"}}}', 'c.json'));
    usage(() => parseConfigFile('{"profiles":{"default":{"scope":1}}}', 'c.json'));
    usage(() => parseConfigFile('{"profiles":{"default":["scope"]}}', 'c.json'));
    expect(parseConfigFile('{}', 'c.json')).toEqual({ profiles: {} });
  });
  it('refuses a profile name that --profile would refuse, naming it and the rule', () => {
    for (const name of ['__proto__', '$(touch /tmp/x)', '`id`', '*', '', '-x', '.hidden', 'a b', 'x'.repeat(65)]) {
      const err = usage(() => parseConfigFile(JSON.stringify({ profiles: { ok: {}, [name]: {} } }), 'c.json'));
      expect(err.code).toBe('CONFIG_FILE_INVALID');
      expect(err.message).toContain('c.json');
      expect(err.hint).toContain('letters, digits');
    }
    const ok = parseConfigFile(JSON.stringify({ profiles: { 'prod-eu.2_b': {}, ['x'.repeat(64)]: {} } }), 'c.json');
    expect(Object.keys(ok.profiles)).toEqual(['prod-eu.2_b', 'x'.repeat(64)]);
  });
  it('keeps profiles in null-prototype maps, so no key reaches Object.prototype', () => {
    const parsed = parseConfigFile('{"profiles":{"default":{"scope":"a"}}}', 'c.json');
    expect(Object.getPrototypeOf(parsed.profiles)).toBeNull();
    expect(Object.getPrototypeOf(parsed.profiles.default)).toBeNull();
    expect(Object.getPrototypeOf(parseConfigFile('{}', 'c.json').profiles)).toBeNull();
    // A "__proto__" key inside a profile is an unknown key, not a prototype.
    usage(() => parseConfigFile('{"profiles":{"default":{"__proto__":{"scope":"a"}}}}', 'c.json'));
  });
  it('accepts a file that starts with a UTF-8 byte order mark', () => {
    const parsed = parseConfigFile('\uFEFF{"profiles":{"default":{"scope":"a"}}}', 'c.json');
    expect(parsed.profiles.default?.scope).toBe('a');
    // Only at the start: anywhere else it is not JSON.
    usage(() => parseConfigFile('{"profiles":\uFEFF{}}', 'c.json'));
  });
  it('refuses a file that is not UTF-8, naming the file', () => {
    const bytes = Buffer.concat([
      Buffer.from('{"profiles":{"default":{"scope":"a'),
      Buffer.from([0xff, 0xc3]),
      Buffer.from('"}}}'),
    ]);
    const err = usage(() => parseConfigFile(bytes, '/home/u/.config/idcli/config.json'));
    expect(err.code).toBe('CONFIG_FILE_INVALID');
    expect(err.message).toBe('/home/u/.config/idcli/config.json is not valid UTF-8');
    // The same text as valid UTF-8, with a byte order mark, is read.
    const good = Buffer.from('\uFEFF{"profiles":{"default":{"scope":"\u00e9t\u00e9 \ufffd"}}}', 'utf8');
    expect(parseConfigFile(good, 'c.json').profiles.default?.scope).toBe('\u00e9t\u00e9 \ufffd');
  });
  it('refuses a key given twice in one object, at any level, naming the file and the key', () => {
    for (const [text, key] of [
      ['{"profiles":{},"profiles":{"default":{"scope":"a"}}}', 'profiles'],
      ['{"profiles":{"default":{"scope":"a"},"default":{}}}', 'default'],
      ['{"profiles":{"default":{"scope":"a","scope":"b"}}}', 'scope'],
      ['{"profiles":{"default":{"scope":"a","\\u0073cope":"b"}}}', 'scope'],
    ]) {
      const err = usage(() => parseConfigFile(text!, 'c.json'));
      expect(err.code, text).toBe('CONFIG_FILE_INVALID');
      expect(err.message, text).toBe(`c.json holds the key '${key}' twice in one object`);
    }
    // Equal keys in different objects, and key-like text inside values, are no duplicates.
    const ok = '{"profiles":{"a":{"scope":"\\"scope\\": {x}"},"b":{"scope":"[\\"a\\":1]"}}}';
    expect(parseConfigFile(ok, 'c.json').profiles.b?.scope).toBe('["a":1]');
  });
  it('for any config, its text is read; with any key repeated in one object, it is refused naming the key', () => {
    const value = fc.string({ unit: 'grapheme', maxLength: 12 }).filter((v) => !/[\u0000-\u001f\u007f-\u009f]/.test(v));
    const profile = fc.uniqueArray(fc.tuple(fc.constantFrom(...CONFIG_KEYS), value), {
      selector: ([k]) => k,
      maxLength: 4,
    });
    const profiles = fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-z][a-z0-9._-]{0,8}$/), profile), {
      selector: ([n]) => n,
      minLength: 1,
      maxLength: 4,
    });
    const members = (pairs: [string, string][]) => `{${pairs.map(([k, v]) => `${k}:${v}`).join(',')}}`;
    const text = (ps: [string, [string, string][]][]) =>
      members([
        [
          '"profiles"',
          members(
            ps.map(([n, es]) => [
              JSON.stringify(n),
              members(es.map(([k, v]) => [JSON.stringify(k), JSON.stringify(v)])),
            ]),
          ),
        ],
      ]);
    fc.assert(
      fc.property(profiles, fc.nat(), fc.constantFrom('top', 'profile', 'key'), (ps, pick, level) => {
        expect(() => parseConfigFile(text(ps), 'c.json')).not.toThrow();
        const at = ps[pick % ps.length]!;
        let bad: string;
        let key: string;
        if (level === 'top') [bad, key] = [text(ps).replace(/}$/, ',"profiles":{}}'), 'profiles'];
        else if (level === 'profile') [bad, key] = [text([...ps, [at[0], []]]), at[0]];
        else {
          fc.pre(at[1].length > 0);
          const [k, v] = at[1][pick % at[1].length]!;
          [bad, key] = [text(ps.map((p) => (p === at ? [p[0], [...p[1], [k, v]]] : p))), k];
        }
        const err = usage(() => parseConfigFile(bad, 'c.json'));
        expect(err.message).toBe(`c.json holds the key '${key}' twice in one object`);
      }),
    );
  });
  it('refuses a value holding a control character, naming the key, never printing it', () => {
    for (const c of ['\u001b', '\u0007', '\n', '\t', '\u007f', '\u009b']) {
      const text = JSON.stringify({ profiles: { default: { scope: `a${c}]0;pwned\u0007` } } });
      const err = usage(() => parseConfigFile(text, 'c.json'));
      expect(err.message).toBe(`c.json: 'scope' in profile 'default' holds a control character`);
    }
  });
  it('lives in the platform config directory unless IDCLI_CONFIG_DIR says otherwise', () => {
    expect(configDirFor({ IDCLI_CONFIG_DIR: '/x' })).toBe('/x');
    expect(configDirFor({ XDG_CONFIG_HOME: '/xdg', HOME: '/h' }, 'linux')).toBe('/xdg/idcli');
    expect(configDirFor({ HOME: '/h' }, 'linux')).toBe('/h/.config/idcli');
    expect(configDirFor({ HOME: '/h' }, 'darwin')).toBe('/h/Library/Application Support/idcli');
  });
  it('ignores a relative XDG_CONFIG_HOME or HOME, as the XDG Base Directory spec says', () => {
    expect(configDirFor({ XDG_CONFIG_HOME: 'xdg', HOME: '/h' }, 'linux')).toBe('/h/.config/idcli');
    expect(configDirFor({ XDG_CONFIG_HOME: '', HOME: '/h' }, 'linux')).toBe('/h/.config/idcli');
    const home = userInfo().homedir;
    expect(configDirFor({ HOME: 'h' }, 'linux')).toBe(join(home, '.config', 'idcli'));
    expect(configDirFor({ HOME: '' }, 'darwin')).toBe(join(home, 'Library', 'Application Support', 'idcli'));
  });
});

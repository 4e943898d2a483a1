import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  configDirFor,
  parseConfigFile,
  resolveSetting,
  resolveSettings,
  type PageSizeSetting,
  type Row,
  SETTINGS,
  type Settings,
  validateSetting,
} from '../src/config.js';
import { ROOT } from './support/cli.js';
import { thrown } from './support/thrown.js';

const usage = (fn: () => unknown) => thrown(fn, 2);
const UUID = '4f9c0a1e-1234-4abc-8def-0123456789ab';
const HOME = { HOME: '/h', XDG_CONFIG_HOME: '/xdg' };

/** Each row: what an empty variable gives (its default), what a good value reads as, and values it refuses. */
const ROWS: {
  [N in keyof typeof SETTINGS]: { unset: unknown; good: [string, unknown][]; bad: string[] };
} = {
  profile: { unset: 'default', good: [['staging', 'staging']], bad: ['__proto__', '../x', ' a', '$(x)'] },
  'config-dir': { unset: configDirFor(HOME), good: [['/x', '/x']], bad: [] },
  'credential-store': {
    unset: 'auto',
    good: [
      ['auto', 'auto'],
      ['keychain', 'keychain'],
      ['file', 'file'],
      ['etcd', 'etcd'],
    ],
    bad: ['vault', 'File', ' file', ' ', 'ETCD'],
  },
  'keychain-service': { unset: 'idcli', good: [['svc', 'svc']], bad: [] },
  'etcd-endpoints': {
    unset: undefined,
    good: [
      ['https://etcd-1:2379', ['https://etcd-1:2379']],
      [' https://a:2379/, https://b:2379 ,', ['https://a:2379', 'https://b:2379']],
      ['http://127.0.0.1:2379,http://[::1]:2379', ['http://127.0.0.1:2379', 'http://[::1]:2379']],
      ['http://localhost:2379', ['http://localhost:2379']],
    ],
    bad: [
      'http://etcd-1:2379',
      'https://a:2379,http://10.0.0.1:2379',
      'etcd-1:2379',
      ',',
      'https://u:p@a:2379',
      'https://a:2379/v3',
    ],
  },
  'etcd-prefix': { unset: '/idcli/', good: [['/ci/', '/ci/']], bad: [] },
  'etcd-cacert': { unset: undefined, good: [['/ca.pem', '/ca.pem']], bad: [] },
  'etcd-cert': { unset: undefined, good: [['/c.pem', '/c.pem']], bad: [] },
  'etcd-key': { unset: undefined, good: [['/k.pem', '/k.pem']], bad: [] },
  'etcd-user': {
    unset: undefined,
    good: [
      ['ci:s3cret', { name: 'ci', password: 's3cret' }],
      ['ci:a:b', { name: 'ci', password: 'a:b' }],
    ],
    bad: ['ci', ':pw'],
  },
  'access-token': { unset: undefined, good: [['tok.en-1', 'tok.en-1']], bad: ['a b', 'tok\r', 'tök', ' '] },
  'http-timeout': {
    unset: 300_000,
    good: [
      ['30', 30_000],
      [' 1.5 ', 1_500],
      ['0.0001', 1],
      ['99999999999', 2 ** 31 - 1],
    ],
    bad: ['0', '-1', '1e3', 'x', ' ', '.5'],
  },
  'http-compression': {
    unset: true,
    good: [
      ['0', false],
      ['1', true],
      [' 0 ', false],
    ],
    bad: ['yes', 'true', '2', ' '],
  },
  'base-url': {
    unset: undefined,
    good: [
      [' https://id.example.com/ ', 'https://id.example.com'],
      ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ],
    bad: ['http://id.example.com', 'id.example.com', ' '],
  },
  'client-id': { unset: undefined, good: [[` ${UUID}`, UUID]], bad: ['abc', ' '] },
  'client-name': { unset: undefined, good: [['my-app ', 'my-app']], bad: ['my app', 'a"b', ' '] },
  'redirect-uri': {
    unset: undefined,
    good: [['http://127.0.0.1:0/callback ', 'http://127.0.0.1:0/callback']],
    bad: ['https://127.0.0.1:1/cb', 'http://127.0.0.1/cb', ' '],
  },
  'api-base-url': { unset: undefined, good: [['https://api.example.com/', 'https://api.example.com']], bad: ['x'] },
  issuer: { unset: undefined, good: [['https://id.example.com', 'https://id.example.com']], bad: ['ftp://x'] },
  scope: { unset: undefined, good: [[' a b ', 'a b']], bad: [] },
  'ui-locales': { unset: undefined, good: [['fr en', 'fr en']], bad: [] },
  'page-size': {
    unset: 'auto',
    good: [
      [' 250 ', 250],
      ['0', 0],
      [' ', 'auto'],
      ['service', 'service'],
    ],
    bad: ['lots', '-5', '1.5', '99999999999999999999'],
  },
};

describe.each(Object.keys(ROWS) as (keyof typeof SETTINGS)[])('the %s setting', (name) => {
  const row: Row<unknown> = SETTINGS[name];
  const expected = ROWS[name];
  const read = (value: string | undefined) => resolveSetting(row, { env: { ...HOME, [row.env]: value } });

  it('is unset when its variable is missing or empty, and then takes its default', () => {
    expect(read(undefined)).toEqual(expected.unset);
    expect(read('')).toEqual(expected.unset);
  });
  it('reads a good value', () => {
    for (const [raw, value] of expected.good) expect(read(raw)).toEqual(value);
  });
  it('refuses a bad one with exit 2, naming the setting', () => {
    for (const raw of expected.bad) {
      const err = usage(() => read(raw));
      expect(err.code).toBe('SETTING_INVALID');
      expect(err.message).toMatch(new RegExp(`${row.env}|${name}`));
    }
  });
  it('is named IDCLI_ and its name in capitals', () => {
    expect(row.env).toBe(`IDCLI_${name.toUpperCase().replaceAll('-', '_')}`);
  });
});

describe('resolveSetting', () => {
  const row = SETTINGS['base-url'];
  const env = { IDCLI_BASE_URL: 'https://env.example.com' };
  it('takes the flag, then the variable, then the file, then the default', () => {
    const file = 'https://file.example.com';
    expect(resolveSetting(row, { flag: 'https://flag.example.com', env, file })).toBe('https://flag.example.com');
    expect(resolveSetting(row, { env, file })).toBe('https://env.example.com');
    expect(resolveSetting(row, { env: { IDCLI_BASE_URL: '' }, file })).toBe(file);
    expect(resolveSetting(SETTINGS['http-timeout'], { env: {} })).toBe(300_000);
  });
  it('reads an empty flag or file entry like any value: only a variable counts as unset when empty', () => {
    usage(() => resolveSetting(SETTINGS.profile, { flag: '', env: { IDCLI_PROFILE: 'staging' } }));
    usage(() => resolveSetting(row, { env: {}, file: '' }));
    expect(resolveSetting(SETTINGS.scope, { flag: '', env: { IDCLI_SCOPE: 'a' } })).toBe('');
  });
  it('resolveSettings reads every row, the environment-only ones included', () => {
    const file = parseConfigFile(JSON.stringify({ profiles: { p: { 'client-id': UUID } } }), 'c.json');
    const s = resolveSettings(
      { profile: 'p' },
      { IDCLI_CONFIG_DIR: '/c', IDCLI_HTTP_COMPRESSION: '0', IDCLI_HTTP_TIMEOUT: '2', IDCLI_ACCESS_TOKEN: 't' },
      file,
    );
    expect(s).toMatchObject({
      profile: 'p',
      configDir: '/c',
      clientId: UUID,
      httpCompression: false,
      httpTimeoutMs: 2000,
      accessToken: 't',
      credentialStore: 'auto',
      keychainService: 'idcli',
    });
  });
});

describe('Settings', () => {
  it('is derived from the table: each field of its row, with the type its parser gives', () => {
    expectTypeOf<Settings['httpTimeoutMs']>().toEqualTypeOf<number>();
    expectTypeOf<Settings['credentialStore']>().toEqualTypeOf<'auto' | 'keychain' | 'file' | 'etcd'>();
    expectTypeOf<Settings['baseUrl']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Settings['accessToken']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Settings['pageSize']>().toEqualTypeOf<() => PageSizeSetting>();
  });

  it('reads a lazy row only when asked, flag > env > file > default like any other', () => {
    const file = parseConfigFile(JSON.stringify({ profiles: { default: { 'page-size': '40' } } }), 'c.json');
    const env = { IDCLI_CONFIG_DIR: '/c', IDCLI_PAGE_SIZE: 'lots' };
    const s = resolveSettings({}, env, file);
    expect(usage(() => s.pageSize()).code).toBe('SETTING_INVALID');
    expect(resolveSettings({ pageSize: '7' }, env, file).pageSize()).toBe(7);
    expect(resolveSettings({}, { IDCLI_CONFIG_DIR: '/c' }, file).pageSize()).toBe(40);
    expect(resolveSettings({ profile: 'none' }, { IDCLI_CONFIG_DIR: '/c' }, file).pageSize()).toBe('auto');
  });

  it('config set stores a lazy row as its trimmed text, and any other as its row reads it', () => {
    expect(validateSetting('page-size', ' 12 ')).toBe('12');
    expect(usage(() => validateSetting('page-size', 'nope')).code).toBe('SETTING_INVALID');
    expect(validateSetting('api-base-url', 'https://api.example.com/')).toBe('https://api.example.com');
  });
});

describe('docs/cli.md', () => {
  it('names every IDCLI_ variable of the table, and no other', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Configuration'), doc.indexOf('## Streams'));
    const tabled = new Set(
      [...section.matchAll(/^\| `(IDCLI_[A-Z_]+)`|^\| `[a-z-]+` +\| [^|]+\| `(IDCLI_[A-Z_]+)`/gm)].map(
        (m) => m[1] ?? m[2],
      ),
    );
    expect([...tabled].sort()).toEqual(
      Object.values(SETTINGS)
        .map((r) => r.env)
        .sort(),
    );
  });
});

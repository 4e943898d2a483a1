/**
 * Every setting in one table (SETTINGS), and the one rule that resolves each: flag > environment variable (unless
 * empty) > the profile in the config file > default (docs/cli.md, "Configuration").
 */
import { userInfo } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { usageError } from './errors.js';
import { clip, printable, quoted } from './printable.js';
import { parseRedirectUri } from './redirect-uri.js';
import { DEFAULT_HTTP_TIMEOUT_MS } from './request-defaults.js';
import { suggest } from './suggest.js';
import { assertString, isJsonObject } from './shape.js';
import { isTokenText } from './token-rules.js';

type Env = Record<string, string | undefined>;

/** One row of SETTINGS: where a setting comes from and how its text is read. */
export interface Row<T> {
  field: string;
  env: string;
  default?: T;
  /** The default when it depends on the environment. */
  fallback?: (env: Env) => T;
  /** Reads the text a source gave (never an empty variable); throws a usage error (exit 2) for a bad one. */
  parse(raw: string): T;
  /** A key a profile in config.json may hold (`config set`). */
  stored?: true;
  /** Its flag is accepted before or after any command; the others' belong to the commands that list them. */
  global?: true;
  /** The flag's help; `defaultText` is shown when the default is not `default` itself. */
  value?: string;
  description?: string;
  defaultText?: string;
  /** The flag takes a whole number (at least `min`) or one of these words; without it, any text. */
  keywords?: readonly string[];
  min?: number;
  /** Read only by the command that asks for it (Settings holds a function), so no other command fails on it. */
  lazy?: true;
}

const STORES = ['auto', 'keychain', 'file', 'etcd'] as const;
export type CredentialStoreMode = (typeof STORES)[number];

/** Items per page under `page-size` auto: a round trip per thousand items lets a walk approach the link's speed. */
export const AUTO_PAGE_SIZE = 1000;

const asIs = (raw: string): string => raw;

/** Every setting; a row with a `description` has a flag of its name (`option.setting`, src/argv/define.ts). */
export const SETTINGS = {
  profile: {
    field: 'profile',
    env: 'IDCLI_PROFILE',
    default: 'default',
    global: true,
    value: '<name>',
    description: 'profile to use',
    parse: parseProfile,
  },
  'config-dir': { field: 'configDir', env: 'IDCLI_CONFIG_DIR', fallback: platformConfigDir, parse: asIs },
  'credential-store': { field: 'credentialStore', env: 'IDCLI_CREDENTIAL_STORE', default: 'auto', parse: parseStore },
  'keychain-service': { field: 'keychainService', env: 'IDCLI_KEYCHAIN_SERVICE', default: 'idcli', parse: asIs },
  // The etcd store's settings are read only when that store is chosen, so a bad one fails no other run.
  'etcd-endpoints': { field: 'etcdEndpoints', env: 'IDCLI_ETCD_ENDPOINTS', lazy: true, parse: parseEtcdEndpoints },
  'etcd-prefix': { field: 'etcdPrefix', env: 'IDCLI_ETCD_PREFIX', default: '/idcli/', parse: asIs },
  'etcd-cacert': { field: 'etcdCaCert', env: 'IDCLI_ETCD_CACERT', parse: asIs },
  'etcd-cert': { field: 'etcdCert', env: 'IDCLI_ETCD_CERT', parse: asIs },
  'etcd-key': { field: 'etcdKey', env: 'IDCLI_ETCD_KEY', parse: asIs },
  'etcd-user': { field: 'etcdUser', env: 'IDCLI_ETCD_USER', lazy: true, parse: parseEtcdUser },
  'access-token': { field: 'accessToken', env: 'IDCLI_ACCESS_TOKEN', parse: parseAccessToken },
  'http-timeout': {
    field: 'httpTimeoutMs',
    env: 'IDCLI_HTTP_TIMEOUT',
    default: DEFAULT_HTTP_TIMEOUT_MS,
    parse: parseHttpTimeout,
  },
  'http-compression': { field: 'httpCompression', env: 'IDCLI_HTTP_COMPRESSION', default: true, parse: parseOnOff },
  'base-url': {
    field: 'baseUrl',
    env: 'IDCLI_BASE_URL',
    stored: true,
    global: true,
    value: '<url>',
    description: 'identity service base URL',
    parse: (v: string) => serviceUrl('base-url', v),
  },
  'client-id': {
    field: 'clientId',
    env: 'IDCLI_CLIENT_ID',
    stored: true,
    global: true,
    value: '<uuid>',
    description: 'registered application id',
    parse: parseClientId,
  },
  'client-name': {
    field: 'clientName',
    env: 'IDCLI_CLIENT_NAME',
    stored: true,
    global: true,
    value: '<name>',
    description: 'registered client name, sent in scope',
    parse: parseClientName,
  },
  'redirect-uri': {
    field: 'redirectUri',
    env: 'IDCLI_REDIRECT_URI',
    stored: true,
    global: true,
    value: '<url>',
    description: 'registered loopback callback',
    parse: (v: string) => validateRedirectUri(v.trim()),
  },
  'api-base-url': {
    field: 'apiBaseUrl',
    env: 'IDCLI_API_BASE_URL',
    stored: true,
    global: true,
    value: '<url>',
    description: 'base URL for `list` and `api` paths',
    defaultText: 'base-url',
    parse: (v: string) => serviceUrl('api-base-url', v),
  },
  issuer: { field: 'issuer', env: 'IDCLI_ISSUER', stored: true, parse: (v: string) => serviceUrl('issuer', v) },
  scope: {
    field: 'scope',
    env: 'IDCLI_SCOPE',
    stored: true,
    value: '<scopes>',
    description: 'extra scopes after "openid <client-name>"',
    parse: (v: string) => plainText('scope', v),
  },
  'ui-locales': {
    field: 'uiLocales',
    env: 'IDCLI_UI_LOCALES',
    stored: true,
    value: '<tags>',
    description: 'sign-in page language, e.g. "fr en"',
    defaultText: 'your locale',
    parse: (v: string) => plainText('ui-locales', v),
  },
  // Read by `list` alone (src/paginate/page-size.ts).
  'page-size': {
    field: 'pageSize',
    env: 'IDCLI_PAGE_SIZE',
    stored: true,
    lazy: true,
    value: '<n>|auto|service',
    description: `items per page to ask for: auto (${AUTO_PAGE_SIZE}, or --limit), a number, or service (the server chooses)`,
    default: 'auto',
    keywords: ['auto', 'service'],
    min: 0,
    parse: parsePageSize,
  },
} as const satisfies Record<string, Row<unknown>>;

type Table = typeof SETTINGS;
export type SettingName = keyof Table;
export type ConfigKey = { [N in SettingName]: Table[N] extends { stored: true } ? N : never }[SettingName];
export type OptionKey = { [N in SettingName]: Table[N] extends { description: string } ? N : never }[SettingName];
type Field<N extends SettingName> = Table[N]['field'];
type Value<N extends SettingName> = ReturnType<Table[N]['parse']>;
type Known<N extends SettingName> = Table[N] extends { default: unknown } | { fallback: unknown } ? N : never;
type Read<N extends SettingName> = Table[N] extends { lazy: true } ? () => Value<N> : Value<N>;
/** The resolved settings under their fields: a row without a default may be undefined, a `lazy` one is a function. */
export type Settings = { [N in SettingName as Field<N & Known<N>>]: Read<N> } & {
  [N in Exclude<SettingName, Known<SettingName>> as Field<N>]?: Read<N>;
};
export type SettingFlags = { [N in OptionKey as Field<N>]?: string };

type Sources = { flag?: string | undefined; env: Env; file?: string | undefined };

/** One setting by the one rule; an empty flag or entry is read like any other value (an empty `--profile` is told). */
export function resolveSetting<T>(row: Row<T> & ({ default: T } | { fallback: (env: Env) => T }), from: Sources): T;
export function resolveSetting<T>(row: Row<T>, from: Sources): T | undefined;
export function resolveSetting<T>(row: Row<T>, from: Sources): T | undefined {
  const raw = from.flag ?? (from.env[row.env] || undefined) ?? from.file;
  if (raw !== undefined) return row.parse(raw);
  return row.fallback ? row.fallback(from.env) : row.default;
}

const NAMES = Object.keys(SETTINGS) as SettingName[]; // Object.keys loses the key type
/** The config keys, in the table's order (`config set`, completion). */
export const CONFIG_KEYS: readonly ConfigKey[] = NAMES.filter((name): name is ConfigKey => 'stored' in SETTINGS[name]);
const hasFlag = (name: SettingName): name is OptionKey => 'description' in SETTINGS[name];
/** The settings with a flag, in the table's order. */
export const OPTION_KEYS: readonly OptionKey[] = NAMES.filter(hasFlag);
export const isConfigKey = (key: string): key is ConfigKey => CONFIG_KEYS.some((k) => k === key);

/** The settings among parsed flags: only an option bound to a row by `option.setting` gives one, whatever its key. */
export function settingFlags(
  specs: readonly { key: string; setting?: OptionKey }[],
  values: Record<string, unknown>,
): SettingFlags {
  const flags: Record<string, string> = {};
  for (const { key, setting } of specs) {
    const v = values[key];
    if (setting !== undefined && (typeof v === 'string' || typeof v === 'number'))
      flags[SETTINGS[setting].field] = `${v}`;
  }
  return flags;
}

/** Profiles by name in null-prototype objects: a name such as `constructor` is never Object.prototype behaviour. */
export type ConfigFile = { profiles: Record<string, Partial<Record<ConfigKey, string>>> };

export function emptyConfigFile(): ConfigFile {
  return { profiles: Object.create(null) as ConfigFile['profiles'] }; // a prototype-free map: Object.create returns any
}

const PROFILE_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const PROFILE_RULE =
  'a profile name is 1 to 64 letters, digits, dots, dashes and underscores, starting with a letter or digit';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CLIENT_NAME_RE = /^[\x21\x23-\x5B\x5D-\x7E]+$/; // a single scope-token (RFC 6749 §3.3): no spaces, quotes or backslashes

export function assertConfigKey(key: string): ConfigKey {
  if (isConfigKey(key)) return key;
  const near = suggest(key, CONFIG_KEYS);
  throw usageError(
    'CONFIG_UNKNOWN_KEY',
    `unknown config key ${quoted(key)}`,
    near ? `did you mean '${near}'?` : `keys: ${CONFIG_KEYS.join(', ')}`,
  );
}

/** The config directory: IDCLI_CONFIG_DIR, else the platform's (`platform` is there for the tests). */
export function configDirFor(env: Env, platform = process.platform): string {
  return resolveSetting({ ...SETTINGS['config-dir'], fallback: (e) => platformConfigDir(e, platform) }, { env });
}

function platformConfigDir(env: Env, platform = process.platform): string {
  if (platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'idcli');
  if (platform === 'darwin') return join(homeDir(env), 'Library', 'Application Support', 'idcli');
  // XDG Base Directory spec: a relative path in these variables is invalid and is to be ignored.
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homeDir(env), '.config'), 'idcli');
}

/** $HOME, or the password database's when $HOME is unset or relative (which would move with the working directory). */
function homeDir(env: Env): string {
  if (env.HOME && isAbsolute(env.HOME)) return env.HOME;
  let home: string | undefined;
  try {
    home = userInfo().homedir;
  } catch {
    // No entry for this user (a container's arbitrary uid): told below.
  }
  if (home && isAbsolute(home)) return home;
  throw usageError(
    'CONFIG_DIR_UNKNOWN',
    'no config directory: HOME is not an absolute path and the user has no home directory',
    'set IDCLI_CONFIG_DIR (or HOME) to an absolute path',
  );
}

const invalidFile = (message: string, hint?: string) => usageError('CONFIG_FILE_INVALID', message, hint);

/** config.json checked whole: a bad profile name is refused, not skipped (completion prints names to the shell). */
export function parseConfigFile(content: string | Uint8Array, path: string): ConfigFile {
  const text = typeof content === 'string' ? content : utf8Text(content, path);
  // A byte order mark, as some Windows editors write: not JSON, but not the user's content either.
  const json = text.startsWith('\uFEFF') ? text.slice(1) : text;
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch {
    throw invalidFile(`${path} is not valid JSON`, FILE_FIX);
  }
  // JSON.parse keeps the last of two equal keys: which one the user meant is not for idcli to guess.
  const twice = duplicateKey(json);
  if (twice !== undefined) throw invalidFile(`${path} holds the key ${quoted(twice)} twice in one object`, FILE_FIX);
  // A file without profiles is an empty one; a `profiles` of any other shape (null too) is refused.
  const profiles = isJsonObject(data) ? (data.profiles === undefined ? {} : data.profiles) : undefined;
  if (!isJsonObject(profiles)) throw invalidFile(`${path} must be an object with a "profiles" object`);
  const out = emptyConfigFile();
  for (const [name, entries] of Object.entries(profiles)) {
    if (!PROFILE_RE.test(name))
      throw invalidFile(`${path}: ${quoted(name)} is not a valid profile name`, `${PROFILE_RULE}; rename or remove it`);
    if (!isJsonObject(entries)) throw invalidFile(`${path}: profile ${quoted(name)} must be an object`);
    // A prototype-free map: Object.create returns any.
    const profile = Object.create(null) as Partial<Record<ConfigKey, string>>;
    for (const [key, value] of Object.entries(entries)) {
      if (!isConfigKey(key)) throw invalidFile(`${path}: unknown key ${quoted(key)} in profile ${quoted(name)}`);
      const what = `${path}: ${quoted(key)} in profile ${quoted(name)}`;
      assertString(value, what, (w) => invalidFile(`${w} must be a string`));
      // A value is printed by `config list` and put into requests: an escape sequence in it is nobody's setting.
      if (hasControls(value)) throw invalidFile(`${what} holds a control character`, FILE_FIX);
      profile[key] = value;
    }
    out.profiles[name] = profile;
  }
  return out;
}

const FILE_FIX = 'fix it or remove it and use `idcli config set`';

function utf8Text(bytes: Uint8Array, path: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw invalidFile(`${path} is not valid UTF-8`, FILE_FIX);
  }
}

/**
 * The first key that one object of `json` holds twice. `json` has parsed, so its quoted runs are exactly its strings,
 * and a string followed by `:` is a key: a scan of those and of the brackets, not a second JSON parser.
 */
function duplicateKey(json: string): string | undefined {
  const objects: (Set<string> | undefined)[] = [];
  for (const [token, quotedText, colon] of json.matchAll(/("(?:[^"\\]|\\.)*")(\s*:)?|[{}[\]]/g)) {
    if (token === '{' || token === '[') objects.push(token === '{' ? new Set() : undefined);
    else if (token === '}' || token === ']') objects.pop();
    else if (colon !== undefined && quotedText !== undefined) {
      const keys = objects.at(-1);
      const key = JSON.parse(quotedText) as string;
      if (keys?.has(key)) return key;
      keys?.add(key);
    }
  }
  return undefined;
}

/** C0, DEL and C1 control characters, as printable.ts escapes them. */
const hasControls = (text: string): boolean => /[\u0000-\u001f\u007f-\u009f]/.test(text);

/** Each resolved once, when asked: `config` and completion need the directory and profile alone. */
export interface SettingsSource {
  configDir(): string;
  profile(): string;
  load(opts?: ConfigFileOptions): Promise<Settings>;
}

export function settingsSource(flags: SettingFlags, env: Env, readFile: ConfigReader = noFile): SettingsSource {
  let configDir: string | undefined;
  let profile: string | undefined;
  const source: SettingsSource = {
    configDir: () => (configDir ??= configDirFor(env)),
    profile: () => (profile ??= resolveSetting(SETTINGS.profile, { flag: flags.profile, env })),
    load: async (opts) => resolveSettings(flags, env, await readFile(source.configDir(), opts), source),
  };
  return source;
}

export type ConfigReader = (configDir: string, opts?: ConfigFileOptions) => Promise<ConfigFile>;
const noFile: ConfigReader = () => Promise.resolve(emptyConfigFile());

export type ConfigFileOptions = { warn?: (msg: string) => void };

export function resolveSettings(
  flags: SettingFlags,
  env: Env,
  file: ConfigFile,
  source: SettingsSource = settingsSource(flags, env),
): Settings {
  const fromFile: Partial<Record<string, string>> = file.profiles[source.profile()] ?? {};
  const given: Partial<Record<string, string>> = flags;
  const settings: Record<string, unknown> = { profile: source.profile(), configDir: source.configDir() };
  for (const name of NAMES) {
    const row: Row<unknown> = SETTINGS[name];
    if (row.field in settings) continue; // the two above, which `config` needs alone
    const read = () => resolveSetting(row, { flag: given[row.field], env, file: fromFile[name] });
    if (row.lazy) settings[row.field] = read;
    else if ((settings[row.field] = read()) === undefined) delete settings[row.field];
  }
  // The loop above gives each row's field its row's value, which TypeScript cannot follow.
  return settings as Settings;
}

/** What `doctor` goes on with when the settings cannot be resolved. */
export const STORE_DEFAULTS = {
  credentialStore: SETTINGS['credential-store'].default,
  keychainService: SETTINGS['keychain-service'].default,
};

/** Where a setting may be given, for error messages that say what to do next. */
export function howToSet(key: ConfigKey): string {
  return [hasFlag(key) && `--${key}`, SETTINGS[key].env, `idcli config set ${key} <value>`].filter(Boolean).join(', ');
}

/** The config keys read as text (`page-size` is read by `list` itself). */
type TextField = { [K in ConfigKey]: Read<K> extends string ? Field<K> : never }[ConfigKey];

export function requireSetting(settings: Settings, field: TextField): string {
  const value = settings[field];
  if (value !== undefined && value !== '') return value;
  const key = CONFIG_KEYS.find((k) => SETTINGS[k].field === field)!;
  throw usageError('SETTING_MISSING', `${key} is not set`, `set it with ${howToSet(key)}`);
}

/** A config key's value as its row reads it, so `config set` never stores a value its row cannot read (lazy too). */
export function validateSetting(key: ConfigKey, raw: string): string {
  const row: Row<unknown> = SETTINGS[key];
  const value = row.parse(raw);
  return row.lazy ? raw.trim() : String(value);
}

// The rows' parsers. Each gets the text as given, never an empty variable (that counts as unset).
const invalidSetting = (message: string, hint?: string) => usageError('SETTING_INVALID', message, hint);

function parseProfile(name: string): string {
  if (!PROFILE_RE.test(name)) throw invalidSetting(`invalid profile name ${quoted(name)}`, PROFILE_RULE);
  return name;
}

function parseStore(raw: string): CredentialStoreMode {
  const mode = STORES.find((s) => s === raw);
  if (mode !== undefined) return mode;
  throw invalidSetting(`IDCLI_CREDENTIAL_STORE must be one of ${STORES.join(', ')}, not ${quoted(raw)}`);
}

/** Sent as is in a header: a control character (a CR from a Windows file, say) would only fail the request. */
function parseAccessToken(raw: string): string {
  if (isTokenText(raw)) return raw;
  throw invalidSetting(
    'IDCLI_ACCESS_TOKEN holds characters no access token has (control characters, spaces or non-ASCII)',
    'set it to the token alone, without line breaks',
  );
}

/** The longest delay a Node timer keeps; a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** IDCLI_HTTP_TIMEOUT in milliseconds: a positive number of seconds (fractions allowed), blanks around it ignored. */
function parseHttpTimeout(text: string): number {
  const raw = text.trim();
  const sec = /^\d+(?:\.\d+)?$/.test(raw) ? Number(raw) : NaN;
  // Weeks are as good as forever here; clamped, not refused, so that a large value means what it says.
  if (sec > 0) return Math.min(Math.ceil(sec * 1000), MAX_TIMER_MS);
  throw invalidSetting(
    `IDCLI_HTTP_TIMEOUT must be a positive number of seconds, not '${clip(printable(raw), 40)}'`,
    `unset it for the default of ${DEFAULT_HTTP_TIMEOUT_MS / 1000} s`,
  );
}

/** IDCLI_HTTP_COMPRESSION: `0` asks for identity bodies only (for a proxy or server whose compression is broken). */
function parseOnOff(text: string): boolean {
  const raw = text.trim();
  if (raw === '1') return true;
  if (raw === '0') return false;
  throw invalidSetting(
    `IDCLI_HTTP_COMPRESSION must be 0 or 1, not '${clip(printable(raw), 40)}'`,
    'set it to 0 for uncompressed bodies, or unset it',
  );
}

export type PageSizeSetting = 'auto' | 'service' | number;

/** The `page-size` setting from any source; 0 is read as given, and refused by `list` unless it only counts. */
function parsePageSize(raw: string): PageSizeSetting {
  const value = raw.trim();
  if (value === '' || value === 'auto') return 'auto';
  if (value === 'service') return 'service';
  const n = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
  if (Number.isSafeInteger(n)) return n;
  throw invalidSetting(
    `page-size must be auto, service or a whole number, not '${clip(printable(value), 40)}'`,
    'auto asks for larger pages than the service default; service sends no pageSize',
  );
}

/** Text sent to the service and printed by `config list`: blanks around it dropped, a control character refused. */
function plainText(key: string, raw: string): string {
  const value = raw.trim();
  if (hasControls(value))
    throw invalidSetting(`${key} must not hold control characters`, 'set it to the text alone, as printed characters');
  return value;
}

function parseClientId(raw: string): string {
  const value = raw.trim();
  if (!UUID_RE.test(value)) throw invalidSetting(`client-id must be a UUID, not ${quoted(value)}`);
  return value;
}

function parseClientName(raw: string): string {
  const value = raw.trim();
  if (CLIENT_NAME_RE.test(value)) return value;
  throw invalidSetting(`client-name must be one scope token (no spaces or quotes), not ${quoted(value)}`);
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
const isLoopbackHost = (host: string) => LOOPBACK_HOSTS.has(host) || /^127(?:\.\d{1,3}){3}$/.test(host);

/** HTTPS, except plain HTTP on loopback (local emulators and tests); credentials never cross the network in clear. */
function serviceUrl(key: string, raw: string): string {
  const value = plainText(key, raw);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidSetting(`${key} must be an absolute URL, not ${quoted(value)}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname)))
    throw invalidSetting(`${key} must use https (http is allowed only for loopback hosts): ${quoted(value)}`);
  if (url.username || url.password || url.search || url.hash)
    throw invalidSetting(`${key} must not contain credentials, a query or a fragment: ${quoted(value)}`);
  // Keep the path (a service may live under a prefix) but without a trailing slash, so `${base}/oauth/token` is right.
  return value.replace(/\/+$/, '');
}

/** IDCLI_ETCD_ENDPOINTS: etcd members, as etcdctl's --endpoints; the refresh token never crosses a network in clear. */
function parseEtcdEndpoints(raw: string): string[] {
  const endpoints = raw
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (endpoints.length === 0) throw invalidSetting('IDCLI_ETCD_ENDPOINTS names no endpoint');
  return endpoints.map((value) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw invalidSetting(`IDCLI_ETCD_ENDPOINTS holds ${quoted(value)}, which is not a URL`, 'give https://host:2379');
    }
    // A URL without an origin (unix://…) is named as given, not as "null".
    const named = url.origin === 'null' ? value : url.origin;
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname)))
      throw invalidSetting(
        `IDCLI_ETCD_ENDPOINTS: the etcd endpoint ${quoted(named)} must use https (http only on loopback)`,
        'give its https:// address, with IDCLI_ETCD_CACERT when its CA is not trusted by the system',
      );
    if (url.username || url.password || url.search || url.hash || url.pathname !== '/')
      throw invalidSetting(
        `IDCLI_ETCD_ENDPOINTS: the etcd endpoint ${quoted(named)} must be scheme, host and port only`,
      );
    return url.origin;
  });
}

/** IDCLI_ETCD_USER: `name:password`, as etcdctl's --user; the password is never shown, even in this message. */
function parseEtcdUser(raw: string): { name: string; password: string } {
  const at = raw.indexOf(':');
  if (at <= 0) throw invalidSetting('IDCLI_ETCD_USER must be name:password', 'as etcdctl --user takes it');
  return { name: raw.slice(0, at), password: raw.slice(at + 1) };
}

function validateRedirectUri(value: string): string {
  if (parseRedirectUri(value)) return value; // sent byte-for-byte, so never normalised
  throw invalidSetting(
    `redirect-uri must look like http://127.0.0.1:<port>/<path> (or [::1] or localhost; port 0 picks a free one), not ${quoted(value)}`,
  );
}

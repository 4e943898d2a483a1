/**
 * idcli's command-line surface as data: the parser, the help pages and the shell completions are all read off
 * this one table, so they cannot drift apart. Mirrors cli-contract.md.
 */
export type OptionType = 'boolean' | 'string' | 'integer';

export interface OptionSpec {
  flag: `--${string}`;
  /** Property name in the parsed options. */
  key: string;
  type: OptionType;
  /** Placeholder shown in help, e.g. `<seconds>`. */
  value?: string;
  description: string;
  defaultValue?: string | number | boolean;
  /** Shown in help when the default is not a literal value (e.g. "your locale"). */
  defaultText?: string;
  choices?: readonly string[];
  min?: number;
  max?: number;
  env?: string;
  /** `--no-browser` sets `browser` to false. */
  negates?: boolean;
}

export interface ArgSpec {
  name: string;
  description: string;
  choices?: readonly string[];
}

export interface CommandSpec {
  name: string;
  summary: string;
  description: string;
  args?: readonly ArgSpec[];
  options: readonly OptionSpec[];
  examples: readonly string[];
  subcommands?: readonly CommandSpec[];
  hidden?: boolean;
}

export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  {
    flag: '--profile',
    key: 'profile',
    type: 'string',
    value: '<name>',
    description: 'profile to use',
    env: 'IDCLI_PROFILE',
    defaultText: 'default',
  },
  {
    flag: '--base-url',
    key: 'baseUrl',
    type: 'string',
    value: '<url>',
    description: 'identity service base URL',
    env: 'IDCLI_BASE_URL',
  },
  {
    flag: '--client-id',
    key: 'clientId',
    type: 'string',
    value: '<uuid>',
    description: 'registered application id',
    env: 'IDCLI_CLIENT_ID',
  },
  {
    flag: '--client-name',
    key: 'clientName',
    type: 'string',
    value: '<name>',
    description: 'registered client name, sent in scope',
    env: 'IDCLI_CLIENT_NAME',
  },
  {
    flag: '--redirect-uri',
    key: 'redirectUri',
    type: 'string',
    value: '<url>',
    description: 'registered loopback callback',
    env: 'IDCLI_REDIRECT_URI',
  },
  {
    flag: '--api-base-url',
    key: 'apiBaseUrl',
    type: 'string',
    value: '<url>',
    description: 'base URL for `list` paths',
    env: 'IDCLI_API_BASE_URL',
    defaultText: 'base-url',
  },
  { flag: '--verbose', key: 'verbose', type: 'boolean', description: 'trace requests on stderr, secrets redacted' },
  { flag: '--quiet', key: 'quiet', type: 'boolean', description: 'only errors and warnings on stderr' },
];

const JSON_OPTION = (what: string): OptionSpec => ({
  flag: '--json',
  key: 'json',
  type: 'boolean',
  description: `print ${what} as JSON`,
});

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'login',
    summary: 'sign in through the browser',
    description:
      'Sign in through the browser (OAuth 2.0 authorization code with PKCE) and store the credentials.\n' +
      'On a terminal, a line counts down the time left until --timeout while the browser is out; Ctrl-C cancels.',
    options: [
      {
        flag: '--prompt',
        key: 'prompt',
        type: 'string',
        value: '<mode>',
        description: 'sign-in page behaviour',
        choices: ['none', 'login', 'create'],
      },
      {
        flag: '--login-hint',
        key: 'loginHint',
        type: 'string',
        value: '<email>',
        description: 'pre-fill the email on the sign-in page',
      },
      {
        flag: '--ui-locales',
        key: 'uiLocales',
        type: 'string',
        value: '<tags>',
        description: 'sign-in page language, e.g. "fr en"',
        env: 'IDCLI_UI_LOCALES',
        defaultText: 'your locale',
      },
      {
        flag: '--scope',
        key: 'scope',
        type: 'string',
        value: '<scopes>',
        description: 'extra scopes after "openid <client-name>"',
        env: 'IDCLI_SCOPE',
      },
      {
        flag: '--no-browser',
        key: 'browser',
        type: 'boolean',
        negates: true,
        description: 'do not open a browser; only print the sign-in URL',
      },
      {
        flag: '--timeout',
        key: 'timeout',
        type: 'integer',
        value: '<seconds>',
        description: 'how long to wait for the sign-in',
        defaultValue: 300,
        min: 1,
        max: 86400,
      },
    ],
    examples: [
      'idcli login',
      'idcli login --no-browser            # print the URL to open in any browser of this machine',
      'idcli login --prompt login --login-hint alice@example.com',
      'idcli --profile staging login --timeout 120',
    ],
  },
  {
    name: 'token',
    summary: 'print a valid access token',
    description: 'Print a valid access token, refreshing it (Serial PKCE) when it is about to expire.',
    options: [
      {
        flag: '--refresh',
        key: 'refresh',
        type: 'boolean',
        description: 'refresh even if the cached token is still valid',
      },
      {
        flag: '--json',
        key: 'json',
        type: 'boolean',
        description: 'print {access_token, token_type, expires_in, expires_at, scope, id_token}',
      },
      {
        flag: '--min-ttl',
        key: 'minTtl',
        type: 'integer',
        value: '<seconds>',
        description: 'refresh when the cached token expires sooner than this',
        defaultValue: 60,
        min: 0,
      },
    ],
    examples: [
      'idcli token',
      'curl -H "Authorization: Bearer $(idcli token)" https://api.example.com/v1/me',
      'TOKEN=$(idcli token --min-ttl 600) || exit   # in CI: valid for 10 more minutes, or fail',
      'idcli token --json | jq -r .expires_at',
    ],
  },
  {
    name: 'list',
    summary: 'stream a paginated collection as NDJSON',
    description:
      'Stream every item of a paginated collection to stdout as NDJSON, one JSON object per line.\n' +
      'On a terminal, stderr shows the progress (a bar with the time left when totalItems or --limit gives the\n' +
      'size) and a one-line summary at the end; nothing of it on a pipe, with CI set or with --quiet.',
    args: [{ name: 'path-or-url', description: 'collection path (resolved against api-base-url) or full URL' }],
    options: [
      {
        flag: '--page-size',
        key: 'pageSize',
        type: 'integer',
        value: '<n>',
        description: 'items per page of the first request',
        defaultText: "the server's, 100",
        min: 0,
      },
      {
        flag: '--page-index',
        key: 'pageIndex',
        type: 'integer',
        value: '<n>',
        description: 'page to start at (offset-based collections)',
        min: 0,
      },
      {
        flag: '--limit',
        key: 'limit',
        type: 'integer',
        value: '<n>',
        description: 'stop after this many items',
        min: 0,
      },
      {
        flag: '--concurrency',
        key: 'concurrency',
        type: 'integer',
        value: '<n>',
        description: 'fetch this many pages at once (offset-based, totalItems known)',
        defaultValue: 1,
        min: 1,
        max: 64,
      },
      { flag: '--count', key: 'count', type: 'boolean', description: 'print totalItems only' },
      {
        flag: '--max-retries',
        key: 'maxRetries',
        type: 'integer',
        value: '<n>',
        description: 'retries for 429, 502, 503, 504 and network errors',
        defaultValue: 5,
        min: 0,
        max: 100,
      },
    ],
    examples: [
      'idcli list users > users.ndjson',
      "idcli list '/v1/users?filter=active' --limit 10 | jq -r .email",
      'idcli list users --count                  # totalItems only',
      'idcli list users --concurrency 4 > users.ndjson',
      'IDCLI_ACCESS_TOKEN=$CI_TOKEN idcli list events --quiet > events.ndjson   # in CI, with a token from elsewhere',
    ],
  },
  {
    name: 'status',
    summary: 'show who is signed in and where credentials are kept',
    description: 'Show who is signed in, with which settings, and where the credentials are stored.',
    options: [JSON_OPTION('the status')],
    examples: ['idcli status', 'idcli status --json | jq .signedIn'],
  },
  {
    name: 'logout',
    summary: 'remove the stored credentials',
    description: 'Remove the stored credentials of this profile from every credential store.',
    options: [],
    examples: ['idcli logout', 'idcli --profile staging logout'],
  },
  {
    name: 'config',
    summary: 'read and write settings of a profile',
    description: 'Read and write settings of a profile in config.json.',
    options: [],
    subcommands: [
      {
        name: 'set',
        summary: 'set a key of the profile',
        description: 'Set a key of the profile.',
        args: [
          { name: 'key', description: 'setting name' },
          { name: 'value', description: 'new value' },
        ],
        options: [],
        examples: ['idcli config set base-url https://id.example.com'],
      },
      {
        name: 'get',
        summary: 'print a key of the profile',
        description: 'Print a key of the profile (nothing when unset).',
        args: [{ name: 'key', description: 'setting name' }],
        options: [],
        examples: ['idcli config get redirect-uri'],
      },
      {
        name: 'unset',
        summary: 'remove a key from the profile',
        description: 'Remove a key from the profile.',
        args: [{ name: 'key', description: 'setting name' }],
        options: [],
        examples: ['idcli config unset scope'],
      },
      {
        name: 'list',
        summary: 'print the keys of the profile',
        description: 'Print the keys of the profile as key=value lines.',
        options: [],
        examples: ['idcli --profile staging config list'],
      },
    ],
    examples: [
      'idcli config set base-url https://id.example.com',
      'idcli config set client-id 4f9c0a1e-1234-4abc-8def-0123456789ab',
      'idcli --profile staging config list',
      'idcli config get redirect-uri',
    ],
  },
  {
    name: 'doctor',
    summary: 'check configuration, network, port and keychain',
    description: 'Check the configuration, the network, the loopback port and the keychain, each with a fix.',
    options: [JSON_OPTION('the checks')],
    examples: ['idcli doctor', 'idcli doctor --json | jq \'.checks[] | select(.status != "pass")\''],
  },
  {
    name: 'completion',
    summary: 'print a shell completion script',
    description: 'Print a shell completion script.',
    args: [{ name: 'shell', description: 'bash, zsh or fish', choices: ['bash', 'zsh', 'fish'] }],
    options: [],
    examples: [
      'idcli completion bash > ~/.local/share/bash-completion/completions/idcli',
      'idcli completion zsh > "${fpath[1]}/_idcli"',
      'idcli completion fish > ~/.config/fish/completions/idcli.fish',
    ],
  },
  // Used by the completion scripts to offer profile names; not part of the documented surface.
  { name: '__profiles', summary: '', description: '', options: [], examples: [], hidden: true },
];

/**
 * idcli's command-line surface as data: the parser, the help pages and the shell completions are all read off
 * this one table, so they cannot drift apart. Mirrors cli-contract.md.
 */
export type OptionType = 'boolean' | 'string' | 'integer';

export interface OptionSpec {
  flag: `--${string}`;
  /** One-letter alias, e.g. `-X`; a value may follow in the same word (`-XPATCH`) or the next. */
  short?: `-${string}`;
  /** Given more than once, every value is kept, in order (a list of strings). */
  repeatable?: boolean;
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
  /** Words an integer option takes besides numbers, e.g. `auto` for --concurrency. */
  keywords?: readonly string[];
  /** Values offered by completion and help without refusing others (e.g. the common HTTP methods). */
  suggestions?: readonly string[];
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
    description: 'base URL for `list` and `api` paths',
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
        description:
          'refresh even if the cached token is still valid (a refresh another idcli completed after this one started counts)',
      },
      {
        flag: '--json',
        key: 'json',
        type: 'boolean',
        description: 'print {access_token, token_type, expires_in, expires_at, scope, id_token}',
      },
      {
        flag: '--header',
        key: 'header',
        type: 'boolean',
        description: 'print "Authorization: Bearer <token>", for curl -H @-',
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
      'idcli token --header | curl -H @- https://api.example.com/v1/me   # the token in no command line',
      'idcli token --min-ttl 600 > /dev/null || exit   # in CI: valid for 10 more minutes, or fail early',
      'idcli token --json | jq -r .expires_at',
    ],
  },
  {
    name: 'api',
    summary: 'send one authenticated request',
    description:
      'Send one authenticated request to the API and print the response body exactly as received (on a terminal,\n' +
      'control characters other than newline and tab are shown escaped). The access token travels in a header only,\n' +
      'never in a command line, so no other user can read it through ps or /proc.\n' +
      'The body is transferred compressed (gzip, br) and printed decoded; IDCLI_HTTP_COMPRESSION=0 asks for it ' +
      'uncompressed.',
    args: [{ name: 'path-or-url', description: 'path (resolved against api-base-url) or full URL of that origin' }],
    options: [
      {
        flag: '--method',
        short: '-X',
        key: 'method',
        type: 'string',
        value: '<verb>',
        description: 'request method',
        defaultText: 'GET, or POST with a body',
        suggestions: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'],
      },
      {
        flag: '--header',
        short: '-H',
        key: 'header',
        type: 'string',
        value: "'Name: value'",
        description: 'add a request header, e.g. Accept; never Authorization',
        repeatable: true,
      },
      {
        flag: '--field',
        short: '-f',
        key: 'field',
        type: 'string',
        value: '<key=value>',
        description: 'add a string field to a JSON object body',
        repeatable: true,
      },
      {
        flag: '--input',
        key: 'input',
        type: 'string',
        value: '<file|->',
        description: 'send this file (or stdin for -) as the body, as is, read as it is sent',
      },
      {
        flag: '--include',
        short: '-i',
        key: 'include',
        type: 'boolean',
        description: 'print the status line and headers before the body',
      },
      {
        flag: '--max-retries',
        key: 'maxRetries',
        type: 'integer',
        value: '<n>',
        description: 'retries of GET, HEAD, OPTIONS for 429, 502, 503, 504 and network errors',
        defaultValue: 5,
        min: 0,
        max: 100,
      },
    ],
    examples: [
      'idcli api users/123',
      'idcli api -X PATCH users/123 -f name=Ada -f role=admin',
      'idcli api -X POST users --input body.json',
      'jq -n \'{name: "Ada"}\' | idcli api -X PUT users/123 --input -',
      'idcli api -i users/123                      # status line and headers first',
      'idcli api /v1/me --quiet > me.json           # in CI: with IDCLI_ACCESS_TOKEN set as a masked secret',
      'idcli token --header | curl -H @- https://api.example.com/v1/me   # when it has to be curl',
    ],
  },
  {
    name: 'list',
    summary: 'stream a paginated collection as NDJSON',
    description:
      'Stream every item of a paginated collection to stdout as NDJSON, one JSON object per line.\n' +
      'On a terminal, stderr shows the progress (a bar with the time left when totalItems or --limit gives the\n' +
      'size) and a one-line summary at the end; nothing of it on a pipe, with CI set or with --quiet.\n' +
      'Pages are transferred compressed (gzip, br; IDCLI_HTTP_COMPRESSION=0 asks for them uncompressed) and, with\n' +
      '--concurrency auto, up to 4 are in flight at once when the collection is offset-based with totalItems.',
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
        value: '<n>|auto',
        description:
          'pages in flight at once (offset-based, totalItems known); auto: up to 4, one at a time after a 429 or 503',
        defaultValue: 'auto',
        keywords: ['auto'],
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
      'idcli list users --concurrency 1 > users.ndjson  # strictly one page after the other',
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

import { argument, defineCommand, option, type OptionsOf } from '../argv/define.js';

const options = () => ({
  target: argument({
    name: 'path-or-url',
    description: 'path (resolved against api-base-url) or full URL of that origin',
  }),
  method: option.string({
    flag: '--method',
    short: '-X',
    value: '<verb>',
    description: 'request method',
    defaultText: 'GET, or POST with a body',
    suggestions: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'],
  }),
  header: option.list({
    flag: '--header',
    short: '-H',
    value: "'Name: value'",
    description: 'add a request header, e.g. Accept; never Authorization',
  }),
  field: option.list({
    flag: '--field',
    short: '-f',
    value: '<key=value>',
    description: 'add a string field to a JSON object body',
  }),
  input: option.string({
    flag: '--input',
    value: '<file|->',
    description: 'send this file (or stdin for -) as the body, as is, read as it is sent',
  }),
  include: option.boolean({
    flag: '--include',
    short: '-i',
    description: 'print the status line and headers before the body',
  }),
  maxRetries: option.integer({
    flag: '--max-retries',
    value: '<n>',
    description: 'retries of GET, HEAD, OPTIONS for 429, 502, 503, 504 and network errors',
    defaultValue: 5,
    min: 0,
    max: 100,
  }),
});
/** Every option but the repeatable ones, which are named in the plural where the request is planned. */
export type ApiOptions = Omit<OptionsOf<ReturnType<typeof options>>, 'header' | 'field'> & {
  headers: readonly string[];
  fields: readonly string[];
};

export const api = defineCommand({
  name: 'api',
  summary: 'send one authenticated request',
  description:
    'Send one authenticated request to the API and print the response body exactly as received (on a terminal,\n' +
    'control characters other than newline and tab are shown escaped). The access token travels in a header only,\n' +
    'never in a command line, so no other user can read it through ps or /proc.\n' +
    'The body is transferred compressed (gzip, br) and printed decoded; IDCLI_HTTP_COMPRESSION=0 asks for it ' +
    'uncompressed.',
  options,
  examples: [
    'idcli api users/123',
    'idcli api -X PATCH users/123 -f name=Ada -f role=admin',
    'idcli api -X POST users --input body.json',
    'jq -n \'{name: "Ada"}\' | idcli api -X PUT users/123 --input -',
    'idcli api -i users/123                      # status line and headers first',
    'idcli api /v1/me --quiet > me.json           # in CI: with IDCLI_ACCESS_TOKEN set as a masked secret',
    'idcli token --header | curl -H @- https://api.example.com/v1/me   # when it has to be curl',
  ],
  async run({ header, field, ...o }, inv) {
    const { runApi } = await import('../commands/api.js');
    await runApi({ ...o, headers: header, fields: field }, await inv.context(), { stdin: inv.stdin });
  },
});

import { argument, defineCommand, option, type OptionsOf, type Value } from '../argv/define.js';
import { SETTINGS } from '../config.js';

const options = () => ({
  target: argument({ name: 'path-or-url', description: 'collection path (resolved against api-base-url) or full URL' }),
  pageSize: pageSizeOption(),
  pageIndex: option.integer({
    flag: '--page-index',
    value: '<n>',
    description: 'page to start at (offset-based collections)',
    min: 0,
  }),
  limit: option.integer({ flag: '--limit', value: '<n>', description: 'stop after this many items', min: 0 }),
  /** Pages in flight; `auto` starts at AUTO_CONCURRENCY and adapts (src/paginate/window.ts). */
  concurrency: option.integerOr({
    flag: '--concurrency',
    value: '<n>|auto',
    description:
      'pages in flight at once (offset-based, totalItems known); auto: from 4 up to 32 while the server keeps up, halved on a 429 or 503',
    defaultValue: 'auto',
    keywords: ['auto'],
    min: 1,
    max: 64,
  }),
  count: option.boolean({ flag: '--count', description: 'print totalItems only' }),
  output: option.string({
    flag: '--output',
    short: '-o',
    value: '<file>',
    description: 'write to this file (- for stdout); the same command run again continues it',
  }),
  restart: option.boolean({ flag: '--restart', description: 'with -o: discard what an earlier run left, start over' }),
  maxRetries: option.integer({
    flag: '--max-retries',
    value: '<n>',
    description: 'retries for 429, 502, 503, 504 and network errors',
    defaultValue: 5,
    min: 0,
    max: 100,
  }),
});
/**
 * The `page-size` setting's flag: a number, `auto` (larger pages) or `service` (no pageSize sent); undefined when not
 * given, so that a pageSize in the target, IDCLI_PAGE_SIZE and the config file apply (src/commands/list.ts).
 */
function pageSizeOption() {
  const spec = option.integerOr({
    flag: '--page-size',
    value: '<n>|auto|service',
    description: 'items per page to ask for: auto (1000, or --limit), a number, or service (the server chooses)',
    defaultValue: 'auto',
    keywords: ['auto', 'service'],
    env: SETTINGS['page-size'].env,
    min: 0,
  });
  // No default value: the parser would fill it in, and a flag's auto would hide the setting's own value.
  const { defaultValue: _, ...rest } = spec;
  return { ...rest, defaultText: 'auto', read: (v: Value) => (v === undefined ? undefined : spec.read(v)) };
}

export type ListOptions = OptionsOf<ReturnType<typeof options>>;

export const list = defineCommand({
  name: 'list',
  summary: 'stream a paginated collection as NDJSON',
  description:
    'Stream every item of a paginated collection to stdout as NDJSON, one JSON object per line.\n' +
    'On a terminal, stderr shows the progress (a bar with the time left when totalItems or --limit gives the\n' +
    'size) and a one-line summary at the end; nothing of it on a pipe, with CI set or with --quiet.\n' +
    'Pages are transferred compressed (gzip, br; IDCLI_HTTP_COMPRESSION=0 asks for them uncompressed), 1000 items\n' +
    'each unless --page-size says otherwise, and with --concurrency auto several are in flight at once when the\n' +
    'collection is offset-based with totalItems: from 4, growing to 32 while the server keeps up.',
  options,
  examples: [
    'idcli list users > users.ndjson',
    "idcli list '/v1/users?filter=active' --limit 10 | jq -r .email",
    'idcli list users -o users.ndjson          # after a stop, the same command continues the file',
    'idcli list users --count                  # totalItems only',
    'idcli list users --concurrency 1 > users.ndjson  # strictly one page after the other',
    'IDCLI_ACCESS_TOKEN=$CI_TOKEN idcli list events --quiet > events.ndjson   # in CI, with a token from elsewhere',
  ],
  async run(o, inv) {
    const { runList } = await import('../commands/list.js');
    await runList(o, await inv.context());
  },
});

/** `idcli api`: one authenticated request, the token only in its header, the response body on stdout as received. */
import { argument, defineCommand, type Invocation, option, type OptionsOf } from '../../argv/define.js';
import { type InputBody, openInput } from './body.js';
import { type ApiPlan, type BodySource, checkFlags, planRequest } from './plan.js';
import { openApiClient } from '../../apiclient/client.js';
import { responseError } from '../../apiclient/status-errors.js';
import { apiBaseUrl } from '../../apiclient/target.js';
import type { CommandContext } from '../../context.js';
import { interrupted } from '../../errors.js';
import { withReason } from '../../http/status-text.js';
import { MAX_REPLAY_BYTES } from '../../http/limits.js';
import type { HttpResponse, StreamedBody } from '../../http/types.js';
import { createPageWriter } from '../../output/page-writer.js';
import { escapeControls } from '../../printable.js';
import { redactUrl } from '../../redact.js';
import { clockOf } from '../../clock.js';

type Body = Omit<InputBody, 'body'> & { body: Buffer | StreamedBody };

const options = {
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
  maxRetries: option.retries('retries of GET, HEAD, OPTIONS for 429, 502, 503, 504 and network errors'),
};
export type ApiOptions = OptionsOf<typeof options>;

export const command = defineCommand({
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
  check: (o) => void checkFlags(o),
  async run(o, invocation) {
    const ctx = await invocation.context();
    // Another origin is refused before anything is read or sent (exit 2).
    const plan = planRequest(o, apiBaseUrl(ctx.settings));
    const input = await requestBody(plan.body, invocation.stdin, ctx);
    try {
      if (ctx.deps.signal.aborted) throw interrupted();
      await call(plan, input, o, ctx);
    } finally {
      input?.close();
    }
  },
});

/** The request (once more after a 401, see ApiClient.send) and the response on stdout, whatever its status. */
async function call(plan: ApiPlan, input: Body | undefined, opts: ApiOptions, ctx: CommandContext): Promise<void> {
  const { deps } = ctx;
  const client = await openApiClient(ctx, { maxSockets: 1, maxRetries: opts.maxRetries });
  const writer = createPageWriter(deps.stdout);
  // Byte for byte into a pipe or a file; on a terminal a body must not be able to drive it (docs/cli.md, "api").
  const shown = deps.stdout.isTTY === true ? escapeControls : (bytes: Buffer) => bytes;
  try {
    const body = input?.body;
    deps.log.verbose(
      `${plan.method} ${redactUrl(plan.url)}: headers ${[...Object.keys(plan.headers), 'authorization'].join(', ')} (values not shown), ${describeBody(body)}`,
    );
    const res = await client.send({ ...plan, body, signal: deps.signal });
    // Shown whatever its status, a 401 that could not be repeated too; the error comes after it.
    if (opts.include) await writer.write(shown(Buffer.from(responseHead(res))));
    await writer.write(shown(res.body));
    const error = responseError(plan.method, plan.url, res, input?.what);
    if (error !== undefined) throw error;
  } finally {
    client.close();
  }
}

function describeBody(body: Body['body'] | undefined): string {
  if (body === undefined) return 'no body';
  if (body.length !== undefined) return `a ${body.length}-byte body`;
  return `a body over ${MAX_REPLAY_BYTES / 1024 / 1024} MB, sent chunked as it is read`;
}

/** The request body: the -f fields as bytes, or --input opened to be read as it is sent. */
async function requestBody(
  source: BodySource,
  stdin: Invocation['stdin'],
  { deps, settings }: CommandContext,
): Promise<Body | undefined> {
  if (source.kind === 'none') return undefined;
  if (source.kind === 'text') return { body: Buffer.from(source.text, 'utf8'), what: '-f', close() {} };
  return openInput(source.path, {
    signal: deps.signal,
    deadlineMs: settings.httpTimeoutMs,
    log: deps.log,
    clock: clockOf(deps),
    stdin,
  });
}

/** The status line and header fields as they came, names in their case and order, CRLF-terminated (`curl -i`). */
function responseHead(res: HttpResponse): string {
  const got = res.received;
  const status = got === undefined ? withReason(res.status) : `${res.status}${got.reason ? ` ${got.reason}` : ''}`;
  let head = `HTTP/${got?.httpVersion ?? '1.1'} ${status}\r\n`;
  const raw = got?.rawHeaders;
  if (raw !== undefined) for (let i = 0; i + 1 < raw.length; i += 2) head += `${raw[i]}: ${raw[i + 1]}\r\n`;
  else
    for (const [name, value] of Object.entries(res.headers))
      for (const v of value === undefined ? [] : [value].flat()) head += `${name}: ${v}\r\n`;
  return `${head}\r\n`;
}

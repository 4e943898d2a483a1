/**
 * `idcli api`: one authenticated request, its response body on stdout byte for byte. The token only ever travels in
 * the Authorization header to the api-base-url origin, so scripts never need it in a command line.
 */
import { type InputBody, openInput } from '../api/body.js';
import { type ApiPlan, type BodySource, planRequest } from '../api/plan.js';
import { openApiClient } from '../apiclient/client.js';
import type { ApiOptions } from '../cmd/api.js';
import { responseError } from '../apiclient/status-errors.js';
import { apiBaseUrl } from '../apiclient/target.js';
import type { CommandContext } from '../context.js';
import { interrupted } from '../errors.js';
import type { RetriedResponse } from '../http/client.js';
import { withReason } from '../http/status-text.js';
import { MAX_REPLAY_BYTES } from '../http/limits.js';
import type { HttpResponse, StreamedBody } from '../http/types.js';
import { createPageWriter } from '../output/page-writer.js';
import { escapeControls } from '../printable.js';
import { redactUrl } from '../redact.js';

export interface ApiIo {
  /** The process's stdin, for `--input -`; opened only then. */
  stdin: () => NodeJS.ReadableStream & { isTTY?: boolean };
}

/** The body to send: --input's, or the -f fields as bytes. */
type Body = Omit<InputBody, 'body'> & { body: Buffer | StreamedBody };

export async function runApi(opts: ApiOptions, ctx: CommandContext, io: ApiIo): Promise<void> {
  // Every flag is checked, and another origin refused, before anything is read or sent (exit 2).
  const plan = planRequest(opts, apiBaseUrl(ctx.settings));
  const input = await requestBody(plan.body, io, ctx);
  try {
    if (ctx.deps.signal.aborted) throw interrupted();
    await call(plan, input, opts, ctx);
  } finally {
    input?.close();
  }
}

/** The request (once more after a 401, see ApiClient.send) and the response on stdout, whatever its status. */
async function call(plan: ApiPlan, input: Body | undefined, opts: ApiOptions, ctx: CommandContext): Promise<void> {
  const { deps } = ctx;
  const client = await openApiClient(ctx, { maxSockets: 1, maxRetries: opts.maxRetries });
  const writer = createPageWriter(deps.stdout);
  // Byte for byte into a pipe or a file; on a terminal a body must not be able to drive it (docs/cli.md, "api").
  const shown = deps.stdout.isTTY === true ? escapeControls : (bytes: Buffer) => bytes;
  const output = async (res: RetriedResponse): Promise<void> => {
    if (opts.include) await writer.write(shown(Buffer.from(responseHead(res))));
    await writer.write(shown(res.body));
  };
  try {
    const body = input?.body;
    deps.log.verbose(
      `${plan.method} ${redactUrl(plan.url)}: headers ${[...Object.keys(plan.headers), 'authorization'].join(', ')} (values not shown), ${describeBody(body)}`,
    );
    const req = { method: plan.method, url: plan.url, headers: plan.headers, body, signal: deps.signal };
    const res = await client.send(req);
    // Shown whatever its status, a 401 that could not be repeated too; the error comes after it.
    await output(res);
    const error = responseError(plan.method, plan.url, res, input?.what);
    if (error !== undefined) throw error;
  } finally {
    client.close();
  }
}

function describeBody(body: Body['body'] | undefined): string {
  if (body === undefined) return 'no body';
  return body.length === undefined
    ? `a body over ${MAX_REPLAY_BYTES / 1024 / 1024} MB, sent chunked as it is read`
    : `a ${body.length}-byte body`;
}

/** The request body: the -f fields as bytes, or --input opened to be read as it is sent. */
async function requestBody(
  source: BodySource,
  io: ApiIo,
  { deps, settings }: CommandContext,
): Promise<Body | undefined> {
  if (source.kind === 'none') return undefined;
  if (source.kind === 'text') return { body: Buffer.from(source.text, 'utf8'), what: '-f', close() {} };
  return openInput(source.path, {
    signal: deps.signal,
    deadlineMs: settings.httpTimeoutMs,
    log: deps.log,
    stdin: io.stdin,
  });
}

/** The status line and header fields as they came, CRLF-terminated like the message itself (what `curl -i` prints). */
function responseHead(res: HttpResponse): string {
  let head = `HTTP/1.1 ${withReason(res.status)}\r\n`;
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) head += `${name}: ${v}\r\n`;
  }
  return `${head}\r\n`;
}

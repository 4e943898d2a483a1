/**
 * `idcli api`: one authenticated request, its response body on stdout byte for byte. The token only ever travels in
 * the Authorization header to the api-base-url origin, so scripts never need it in a command line.
 */
import { openInput, REPLAY_CAP } from '../api/body.js';
import { type ApiPlan, type BodySource, planRequest } from '../api/plan.js';
import { responseHead, statusError } from '../api/response.js';
import type { ApiOptions } from '../cmd/api.js';
import type { CommandContext } from '../context.js';
import { ExitCode, IdcliError, usageError } from '../errors.js';
import { createHttpClient, type HttpClient, type RetriedResponse } from '../http/client.js';
import { announceLongWaits } from '../http/retry.js';
import { canResend, type HttpRequest, NetworkError, type StreamedBody } from '../http/types.js';
import { createPageWriter } from '../output/page-writer.js';
import { createBearer } from '../paginate/bearer.js';
import { escapeControls } from '../printable.js';
import { redactUrl } from '../redact.js';

export interface ApiIo {
  /** The process's stdin, for `--input -`; opened only then. */
  stdin: () => NodeJS.ReadableStream & { isTTY?: boolean };
}

/** The body to send; `what` names where it comes from in messages, `close` lets go of it. */
interface Body {
  body: Buffer | StreamedBody;
  what: string;
  close(): void;
}

/** Methods that are repeated after a transient failure (cli-contract "api"); any other is sent at most once more, after a 401. */
const RETRIED_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export async function runApi(opts: ApiOptions, ctx: CommandContext, io: ApiIo): Promise<void> {
  const { deps, settings } = ctx;
  const apiBase = settings.apiBaseUrl ?? settings.baseUrl;
  if (apiBase === undefined || apiBase === '') {
    throw usageError('no API base URL is configured', 'set --api-base-url or --base-url (or IDCLI_BASE_URL)');
  }
  // Every flag is checked, and another origin refused, before anything is read or sent (exit 2).
  const plan = planRequest(opts, apiBase);
  const input = await requestBody(plan.body, io, ctx);
  try {
    if (deps.signal.aborted) throw interrupted();
    await call(plan, input, opts, ctx);
  } finally {
    input?.close();
  }
}

/** The request with the current token, once more after a 401 with a fresh one, and the response on stdout. */
async function call(plan: ApiPlan, input: Body | undefined, opts: ApiOptions, ctx: CommandContext): Promise<void> {
  const { deps, settings } = ctx;
  const body = input?.body;
  const bearer = createBearer(await ctx.tokens(), () => deps.now());
  // Fetched before any request so "not signed in" fails fast (exit 3); refreshed here when about to expire.
  let token = await bearer.token();
  deps.log.addSecret(token);

  const http = createHttpClient({
    log: deps.log,
    env: deps.env,
    deadlineMs: settings.httpTimeoutMs,
    maxSockets: 1,
    now: () => deps.now(),
  });
  const writer = createPageWriter(deps.stdout);
  // Byte for byte into a pipe or a file; on a terminal a body must not be able to drive it (cli-contract "api").
  const shown = deps.stdout.isTTY === true ? escapeControls : (bytes: Buffer) => bytes;
  const output = async (res: RetriedResponse): Promise<void> => {
    if (opts.include) await writer.write(shown(Buffer.from(responseHead(res))));
    await writer.write(shown(res.body));
  };
  try {
    deps.log.verbose(
      `${plan.method} ${redactUrl(plan.url)}: headers ${[...Object.keys(plan.headers), 'authorization'].join(', ')} (values not shown), ${describeBody(body)}`,
    );
    let res = await send(http, plan, body, token, opts, ctx);
    if (res.status === 401) {
      // RFC 6750 §3.1 invalid_token: one refresh, then the request once more, whatever its method.
      try {
        token = await bearer.rejected(token);
      } catch (err) {
        await output(res);
        throw err;
      }
      deps.log.addSecret(token);
      if (input && !canResend(input.body)) {
        await output(res);
        throw notRepeated(plan, input.what);
      }
      deps.log.verbose('the access token was rejected (HTTP 401); repeating the request once with a fresh one');
      res = await send(http, plan, body, token, opts, ctx);
    }
    await output(res);
    if (res.status < 200 || res.status >= 300) throw statusError(plan.method, plan.url, res);
  } catch (err) {
    throw deps.signal.aborted ? interrupted() : err;
  } finally {
    http.close();
  }
}

/** A 401 for a body that went out as it was read: the fresh token is stored, but the body cannot go out again. */
function notRepeated(plan: ApiPlan, what: string): IdcliError {
  return new IdcliError(
    `${plan.method} ${redactUrl(plan.url)}: the access token was rejected (HTTP 401 Unauthorized), and the request ` +
      `was not repeated: its body from ${what} was sent as it was read and cannot be sent again`,
    ExitCode.AUTH,
    { hint: 'the token is refreshed now; run the command again' },
  );
}

function describeBody(body: HttpRequest['body']): string {
  if (body === undefined) return 'no body';
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  return length === undefined
    ? `a body over ${REPLAY_CAP / 1024 / 1024} MB, sent chunked as it is read`
    : `a ${length}-byte body`;
}

function interrupted(): IdcliError {
  return new IdcliError('interrupted', ExitCode.INTERRUPTED);
}

async function send(
  http: HttpClient,
  plan: ApiPlan,
  body: HttpRequest['body'],
  token: string,
  opts: ApiOptions,
  { deps }: CommandContext,
): Promise<RetriedResponse> {
  const req: HttpRequest = {
    method: plan.method,
    url: plan.url,
    headers: { ...plan.headers, authorization: `Bearer ${token}` },
    ...(body ? { body } : {}),
    signal: deps.signal,
  };
  if (RETRIED_METHODS.has(plan.method)) {
    return http.requestWithRetry(req, {
      maxRetries: opts.maxRetries,
      onRetry: announceLongWaits((m) => deps.log.info(m), opts.maxRetries),
    });
  }
  try {
    return { ...(await http.request(req)), retries: 0 };
  } catch (err) {
    if (!(err instanceof NetworkError)) throw err;
    throw new IdcliError(
      `${plan.method} ${redactUrl(plan.url)} failed: ${err.message}; not repeated, as it may have reached the server`,
      ExitCode.NETWORK,
      { cause: err },
    );
  }
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

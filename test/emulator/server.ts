// Routing, the request log, content negotiation and fault application.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { handleAuthorize, handleLogin, handleSignup } from './authorize.js';
import { type CodingFault, withCodingFault } from './coding-faults.js';
import { handleCollection } from './collections.js';
import { type Coding, negotiate } from './compression.js';
import type { Core, Exchange } from './core.js';
import type { FaultQueue } from './faults.js';
import { formRecord, json, mediaType, methodNotAllowed, parseParams, readBody, type Reply } from './http-io.js';
import { handleResource, servesResource } from './resources.js';
import { send } from './send.js';
import { handleToken } from './token-endpoint.js';
import type { Fault, LoggedRequest } from './types.js';

async function route(core: Core, ex: Exchange): Promise<Reply> {
  const method = ex.req.method ?? 'GET';
  switch (ex.pathname) {
    case '/oauth/authorize':
      return method === 'GET' ? handleAuthorize(core, ex) : methodNotAllowed('GET');
    case '/oauth/login':
      return method === 'POST' ? handleLogin(core, ex) : methodNotAllowed('POST');
    case '/oauth/signup':
      return method === 'POST' ? handleSignup(core, ex) : methodNotAllowed('POST');
    case '/oauth/token':
      return method === 'POST' ? handleToken(core, ex) : methodNotAllowed('POST');
    default: {
      const collection = core.collections.get(ex.pathname);
      if (!collection && servesResource(core, ex.pathname)) return handleResource(core, ex);
      if (!collection) return json(404, { error: 'not_found', error_description: 'No such endpoint.' });
      return method === 'GET' ? handleCollection(core, ex, collection) : methodNotAllowed('GET');
    }
  }
}

/** Reads the body of a request a fault answers instead of the endpoint, so the log still shows its form. */
async function absorb(core: Core, ex: Exchange, fault: Fault): Promise<void> {
  const body = await readBody(ex.req);
  if (body === null || mediaType(ex.req.headers['content-type']) !== 'application/x-www-form-urlencoded') return;
  const p = parseParams(body.toString('utf8'), true);
  ex.log.form = formRecord(p);
  for (const [name, value] of p.entries) if (name === 'code_verifier' && value !== '') core.remember(value);
  if (ex.pathname === '/oauth/token') {
    core.tokenEvents.push({
      grant: p.get('grant_type') ?? '',
      ok: false,
      error: `fault:${fault.kind}`,
      time: core.now(),
    });
  }
}

function faultReply(fault: Fault & { kind: 'status' | 'body' }): Reply {
  if (fault.kind === 'body') {
    return {
      status: fault.status ?? 200,
      headers: { 'content-type': fault.contentType ?? 'application/json', ...fault.headers },
      body: fault.body,
    };
  }
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', ...fault.headers };
  if (fault.retryAfter !== undefined) headers['retry-after'] = fault.retryAfter;
  const body =
    fault.body ?? JSON.stringify({ error: 'injected_fault', error_description: `Injected ${fault.status}.` });
  return { status: fault.status, headers, body };
}

/** The reply with `fields` put into its JSON object; any other reply is left as it is. */
function patched(reply: Reply, fields: Record<string, unknown>): Reply {
  if (typeof reply.body !== 'string') return reply;
  let value: unknown;
  try {
    value = JSON.parse(reply.body);
  } catch {
    return reply;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return reply;
  return { ...reply, body: JSON.stringify({ ...value, ...fields }) };
}

/** Logs the request as it arrives, before anything can fail or wait. */
function logged(core: Core, req: IncomingMessage): LoggedRequest {
  const url = req.url ?? '/';
  const qi = url.indexOf('?');
  const log: LoggedRequest = {
    method: req.method ?? '',
    path: qi < 0 ? url : url.slice(0, qi),
    url,
    headers: { ...req.headers },
    bearer: /^bearer +(\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? null,
    time: core.now(),
    wallTime: Date.now(),
  };
  core.requests.push(log);
  return log;
}

async function handle(
  core: Core,
  faults: FaultQueue,
  req: IncomingMessage,
  res: ServerResponse,
  log: LoggedRequest,
): Promise<void> {
  // Before the first await, so the hook runs before anything is checked or answered; a throw in it is a 500.
  core.onRequest?.(log);
  const raw = log.url;
  const qi = raw.indexOf('?');
  const pathname = log.path;
  const ex: Exchange = { req, pathname, query: qi < 0 ? '' : raw.slice(qi + 1), log };
  const negotiated = negotiate(req.headers['accept-encoding']);
  const coding: Coding = 'coding' in negotiated ? negotiated.coding : 'identity';
  const reply = async (r: Reply, truncate = false) => {
    log.status = r.status;
    await send(res, r, { link: core.link, cache: core.encoded, coding, truncate });
  };
  const limit = core.rateLimit;
  if (limit !== undefined && log.inFlight !== undefined && log.inFlight > limit.maxInFlight) {
    const description = `More than ${limit.maxInFlight} requests in flight.`;
    return reply(
      json(429, { error: 'rate_limited', error_description: description }, { 'retry-after': limit.retryAfter }),
    );
  }
  const fault = faults.take(pathname, new URLSearchParams(ex.query));
  let truncate = false;
  let codingFault: CodingFault | null = null;
  let patch: Record<string, unknown> | undefined;
  if (fault) {
    switch (fault.kind) {
      case 'drop':
        await absorb(core, ex, fault);
        req.socket.destroy();
        return;
      case 'status':
      case 'body':
        await absorb(core, ex, fault);
        return reply(faultReply(fault));
      case 'latency':
        await core.sleep(fault.ms);
        break;
      case 'hold':
        await fault.until.catch(() => {});
        break;
      case 'next':
        ex.nextOverride = { href: fault.href };
        break;
      case 'drop-mid-body':
        truncate = true;
        break;
      case 'encoding':
      case 'gzip-bomb':
      case 'corrupt-gzip':
        codingFault = fault;
        break;
      case 'patch':
        patch = fault.fields;
        break;
    }
  }
  if ('refused' in negotiated) {
    const error = negotiated.refused === 406 ? 'not_acceptable' : 'invalid_request';
    return reply(json(negotiated.refused, { error, error_description: negotiated.description }), truncate);
  }
  const routed = await route(core, ex);
  const answer = patch === undefined ? routed : patched(routed, patch);
  return reply(codingFault ? await withCodingFault(answer, codingFault, core.bombs) : answer, truncate);
}

export function createHandler(core: Core, faults: FaultQueue): (req: IncomingMessage, res: ServerResponse) => void {
  let inFlight = 0;
  return (req, res) => {
    const log = logged(core, req);
    if (core.collections.get(log.path) !== undefined) {
      // Counted from arrival until the response is done with, however it ends (the rate limit's measure).
      log.inFlight = ++inFlight;
      res.once('close', () => inFlight--);
    }
    handle(core, faults, req, res, log)
      .catch((err: unknown) => {
        // An emulator bug must show up as a 500 in the test that hit it, never as a crash of the test run.
        core.errors.push(err);
        if (res.headersSent) res.destroy();
        else {
          const failure = json(500, { error: 'server_error', error_description: 'Emulator failure.' });
          void send(res, failure, { link: core.link, cache: core.encoded, coding: 'identity' });
        }
      })
      .finally(() => {
        log.handled = true;
      });
  };
}

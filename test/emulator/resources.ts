// The resource API `idcli api` is tested against: single items (GET, HEAD, PUT, PATCH, DELETE), an echo of what
// arrived, an upload sink that counts bytes, chosen statuses, an endpoint that is always unavailable and a slow one.
// Bearer-checked like collections.
import { authenticate } from './collections.js';
import type { Core, Exchange } from './core.js';
import { json, mediaType, parseParams, readBody, type Reply } from './http-io.js';

/** Fixed endpoints; everything else under a stored item's path is the item itself. */
export const ECHO_PATH = '/v1/echo';
export const STATUS_PREFIX = '/v1/status/';
export const UNAVAILABLE_PATH = '/v1/unavailable';
export const SLOW_PATH = '/v1/slow';
export const UPLOAD_PATH = '/v1/upload';

const JSON_TYPE = 'application/json; charset=utf-8';

export class Resources {
  private readonly items = new Map<string, Buffer>();

  set(path: string, body: string | Buffer): void {
    if (!path.startsWith('/') || /[?#]/.test(path) || path.startsWith('/oauth/') || isFixed(path)) {
      throw new Error('resource path must be a pathname like /v1/users/42, outside /oauth/ and the fixed endpoints');
    }
    this.items.set(path, Buffer.from(body));
  }

  get(path: string): Buffer | undefined {
    return this.items.get(path);
  }

  delete(path: string): boolean {
    return this.items.delete(path);
  }
}

function isFixed(path: string): boolean {
  return (
    path === ECHO_PATH ||
    path === UNAVAILABLE_PATH ||
    path === SLOW_PATH ||
    path === UPLOAD_PATH ||
    path.startsWith(STATUS_PREFIX)
  );
}

/** Whether the resource API answers this path (a fixed endpoint or a stored item). */
export function servesResource(core: Core, path: string): boolean {
  return isFixed(path) || core.resources.get(path) !== undefined;
}

export async function handleResource(core: Core, ex: Exchange): Promise<Reply> {
  const refusal = authenticate(core, ex);
  if (ex.pathname === UPLOAD_PATH) return upload(ex, refusal);
  // The body is read even when refused, so the request log shows what was sent.
  const body = (await readBody(ex.req)) ?? Buffer.alloc(0);
  ex.log.body = body;
  if (refusal) return refusal;
  const method = ex.req.method ?? 'GET';
  const path = ex.pathname;
  if (path === ECHO_PATH) return echo(ex, body);
  if (path === UNAVAILABLE_PATH) return unavailable(ex);
  if (path === SLOW_PATH) return slow(core, ex);
  if (path.startsWith(STATUS_PREFIX)) return chosenStatus(core, ex);
  return item(core, path, method, ex, body);
}

/** What arrived: method, path, query, headers (the Authorization value left out), the body as text and base64. */
function echo(ex: Exchange, body: Buffer): Reply {
  const headers: Record<string, string | string[] | undefined> = { ...ex.req.headers };
  if (headers.authorization !== undefined) headers.authorization = '(checked, not echoed)';
  return json(200, {
    method: ex.req.method,
    path: ex.pathname,
    query: ex.query,
    headers,
    body: body.toString('utf8'),
    bodyBase64: body.toString('base64'),
  });
}

/**
 * Reads a body of any size without keeping it, counting its bytes in the request log as they arrive, and answers
 * `{"received": n}`. A client that hangs up mid-body ends the exchange quietly: that is what it is there to see.
 */
async function upload(ex: Exchange, refusal: Reply | null): Promise<Reply> {
  ex.log.received = 0;
  try {
    for await (const chunk of ex.req) ex.log.received += (chunk as Buffer).length;
  } catch {
    return { status: 400 };
  }
  return refusal ?? json(200, { received: ex.log.received });
}

/** 503 every time; `?retryAfter=N` adds a Retry-After. */
function unavailable(ex: Exchange): Reply {
  const retryAfter = parseParams(ex.query, false).get('retryAfter');
  return json(
    503,
    { error: 'unavailable', error_description: 'Always unavailable.' },
    retryAfter === undefined ? {} : { 'retry-after': retryAfter },
  );
}

/** Waits `?ms=N` (default 1000) before answering. */
async function slow(core: Core, ex: Exchange): Promise<Reply> {
  const raw = parseParams(ex.query, false).get('ms') ?? '1000';
  const ms = /^\d{1,6}$/.test(raw) ? Number(raw) : NaN;
  if (Number.isNaN(ms)) return json(400, { error: 'invalid_request', error_description: 'ms must be 0..999999.' });
  await core.sleep(ms);
  return json(200, { slept: ms });
}

/**
 * `/v1/status/{code}` answers that status with a small JSON body (none for 204 and 304); a 3xx points
 * `Location` at `?location=` (default: the echo endpoint).
 */
function chosenStatus(core: Core, ex: Exchange): Reply {
  const raw = ex.pathname.slice(STATUS_PREFIX.length);
  const status = /^[1-5]\d\d$/.test(raw) ? Number(raw) : NaN;
  if (Number.isNaN(status) || status < 200) {
    return json(400, { error: 'invalid_request', error_description: 'status must be 200..599.' });
  }
  const headers: Record<string, string> = {};
  if (status >= 300 && status < 400) {
    headers.location = parseParams(ex.query, false).get('location') ?? `${core.baseUrl}${ECHO_PATH}`;
  }
  if (status === 204 || status === 304) return { status, headers };
  return json(status, { status }, headers);
}

function isJson(ex: Exchange): boolean {
  const type = mediaType(ex.req.headers['content-type']);
  return type === 'application/json' || type === 'application/merge-patch+json';
}

function notFound(): Reply {
  return json(404, { error: 'not_found', error_description: 'No such resource.' });
}

/**
 * A stored item. GET returns its bytes exactly as stored; PUT stores the body's bytes as they came (it must be
 * JSON); PATCH merges a JSON object into it (re-serialised, so only PUT keeps odd formatting); DELETE answers 204.
 */
function item(core: Core, path: string, method: string, ex: Exchange, body: Buffer): Reply {
  const stored = core.resources.get(path);
  if (stored === undefined) return notFound();
  switch (method) {
    case 'GET':
    case 'HEAD':
      return { status: 200, headers: { 'content-type': JSON_TYPE }, body: stored };
    case 'PUT': {
      if (!isJson(ex)) return unsupported();
      if (parseJson(body) === undefined) return invalidJson();
      core.resources.set(path, body);
      return { status: 200, headers: { 'content-type': JSON_TYPE }, body };
    }
    case 'PATCH': {
      if (!isJson(ex)) return unsupported();
      const patch = parseJson(body);
      const current = parseJson(stored);
      if (!isObject(patch) || !isObject(current)) return invalidJson();
      const merged = Buffer.from(JSON.stringify({ ...current, ...patch }));
      core.resources.set(path, merged);
      return { status: 200, headers: { 'content-type': JSON_TYPE }, body: merged };
    }
    case 'DELETE':
      core.resources.delete(path);
      return { status: 204 };
    default:
      return json(
        405,
        { error: 'method_not_allowed', error_description: 'Use GET, PUT, PATCH or DELETE.' },
        { allow: 'GET, HEAD, PUT, PATCH, DELETE' },
      );
  }
}

function unsupported(): Reply {
  return json(415, { error: 'unsupported_media_type', error_description: 'Send application/json.' });
}

function invalidJson(): Reply {
  return json(400, { error: 'invalid_request', error_description: 'The body is not a JSON object.' });
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// Collection endpoints: bearer check (RFC 6750) and offset- or cursor-based pages per the service contract.
import type { Core, Exchange } from './core.js';
import { envelopeFrame, itemSeparator, type LinkStyle, linkText } from './envelope.js';
import { json, type Params, parseParams, type Reply } from './http-io.js';
import { hmac, randomToken } from './tokens.js';
import type { CollectionSpec } from './types.js';

export interface StoredCollection {
  path: string;
  /** Distinct for every setCollection, so cached encodings of a replaced collection never match. */
  id: number;
  type: 'offset' | 'cursor';
  count: number;
  totalKnown: boolean;
  lastLink: boolean;
  linkStyle: LinkStyle;
  querySpelling: 'pageIndex-first' | 'pageSize-first';
  serves: CollectionSpec['serves'];
  pretty: boolean;
  public: boolean;
  /** The bytes of items [from, to) joined by the separator: a view, no copy. */
  slice(from: number, to: number): Buffer;
}

/**
 * Encodes every item once, joined by the separator, into one buffer with each item's start offset. A page is
 * then a subarray written straight to the socket: no per-request work proportional to the page's bytes, which
 * keeps a million-item walk at socket speed.
 */
function packItems(items: readonly string[], separator: string) {
  const sep = Buffer.byteLength(separator);
  let total = 0;
  for (const item of items) total += Buffer.byteLength(item);
  const data = Buffer.allocUnsafe(total + Math.max(0, items.length - 1) * sep);
  const starts = new Float64Array(items.length + 1);
  let pos = 0;
  items.forEach((item, i) => {
    starts[i] = pos;
    pos += data.write(item, pos, 'utf8');
    if (i < items.length - 1) pos += data.write(separator, pos, 'utf8');
  });
  starts[items.length] = pos + sep; // as if a separator followed the last item
  return (from: number, to: number) =>
    from >= to ? data.subarray(0, 0) : data.subarray(starts[from] as number, (starts[to] as number) - sep);
}

export class Collections {
  private readonly map = new Map<string, StoredCollection>();
  /** Signs cursors, so a forged or edited one is refused instead of silently serving another position. */
  readonly cursorSecret = Buffer.from(randomToken(), 'utf8');
  private sets = 0;

  set(path: string, c: CollectionSpec): void {
    if (!path.startsWith('/') || /[?#]/.test(path) || path.startsWith('/oauth/')) {
      throw new Error('collection path must be a pathname like /v1/users, outside /oauth/');
    }
    const pretty = c.pretty ?? false;
    this.map.set(path, {
      path,
      id: ++this.sets,
      type: c.type,
      count: c.items.length,
      totalKnown: c.type === 'offset' || (c.totalKnown ?? false),
      lastLink: c.type === 'offset' || (c.lastLink ?? false),
      linkStyle: c.linkStyle ?? 'object',
      querySpelling: c.querySpelling ?? 'pageIndex-first',
      serves: c.serves,
      pretty,
      public: c.public ?? false,
      // Packed at registration, so later edits of the caller's array cannot change a walk in progress.
      slice: packItems(c.items, itemSeparator(pretty)),
    });
  }

  get(path: string): StoredCollection | undefined {
    return this.map.get(path);
  }
}

const DEFAULT_PAGE_SIZE = 100;
const REALM = 'Bearer realm="idcli-emulator"';

class BadQuery extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

function badRequest(description: string, status = 400): Reply {
  return json(status, { error: 'invalid_request', error_description: description });
}

function nonNegative(p: Params, name: string, fallback: number): number {
  const raw = p.get(name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^(0|[1-9]\d*)$/.test(raw) || !Number.isSafeInteger(n)) {
    throw new BadQuery(`${name} must be a non-negative integer.`);
  }
  return n;
}

/** The pageSize asked for, or the default; above the emulator's maximum (if any) refused or capped. */
function pageSizeParam(core: Core, p: Params): number {
  const size = nonNegative(p, 'pageSize', DEFAULT_PAGE_SIZE);
  const limit = core.pageLimit;
  if (limit === undefined || size <= limit.max) return size;
  if (limit.over === 'cap') return limit.max;
  throw new BadQuery(`pageSize must be at most ${limit.max}.`, limit.over === 'unprocessable' ? 422 : 400);
}

/** RFC 6750 §3: no credentials → a bare challenge; bad credentials → error="invalid_token". */
export function authenticate(core: Core, ex: Exchange): Reply | null {
  const header = ex.req.headers.authorization;
  const unauthorized = (challenge: string, body: object) => json(401, body, { 'www-authenticate': challenge });
  if (header === undefined || !/^bearer(\s|$)/i.test(header)) {
    return unauthorized(REALM, { error: 'unauthorized', error_description: 'A bearer access token is required.' });
  }
  // RFC 6750 §2.1: credentials = "Bearer" 1*SP b64token.
  const m = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i.exec(header);
  if (!m) {
    return json(
      400,
      { error: 'invalid_request', error_description: 'The Authorization header is malformed.' },
      { 'www-authenticate': `${REALM}, error="invalid_request"` },
    );
  }
  const check = core.grants.checkAccess(m[1] as string);
  if (check === 'ok') return null;
  const description = `The access token is ${check}.`;
  return unauthorized(`${REALM}, error="invalid_token", error_description="${description}"`, {
    error: 'invalid_token',
    error_description: description,
  });
}

interface Page {
  pageIndex?: number;
  totalItems?: number;
  from: number; // items [from, to)
  to: number;
  links: Array<[string, string]>; // name → pathname + query
}

function query(extras: Array<[string, string]>, own: Array<[string, string]>): string {
  return new URLSearchParams([...extras, ...own]).toString();
}

function offsetPage(c: StoredCollection, p: Params, extras: Array<[string, string]>, asked: number): Page {
  if (p.has('cursor')) throw new BadQuery('cursor is not accepted by an offset-based collection.');
  const pageSize = c.serves && asked > 0 ? Math.max(1, Math.round(asked * c.serves.times)) : asked;
  const linkSize = c.serves?.links === 'asked' ? asked : pageSize;
  const pageIndex = nonNegative(p, 'pageIndex', 0);
  const n = c.count;
  const start = pageIndex * pageSize;
  if (!Number.isSafeInteger(start)) throw new BadQuery('pageIndex × pageSize is too large.');
  const from = Math.min(start, n);
  const to = Math.min(start + pageSize, n);
  const lastIndex = pageSize === 0 ? 0 : Math.max(0, Math.ceil(n / pageSize) - 1);
  const at = (i: number) => {
    const own: Array<[string, string]> = [
      ['pageIndex', String(i)],
      ['pageSize', String(linkSize)],
    ];
    return `${c.path}?${query(extras, c.querySpelling === 'pageSize-first' ? own.reverse() : own)}`;
  };
  const links: Array<[string, string]> = [
    ['self', at(pageIndex)],
    ['first', at(0)],
  ];
  if (pageSize > 0 && start + pageSize < n) links.push(['next', at(pageIndex + 1)]);
  // Past the end, prev leads back to the last real page rather than to another empty one.
  if (pageSize > 0 && pageIndex > 0) links.push(['prev', at(Math.min(pageIndex - 1, lastIndex))]);
  links.push(['last', at(lastIndex)]);
  return { pageIndex, totalItems: n, from, to, links };
}

interface CursorState {
  o: number; // offset of the page's first item
  s: number; // page size chosen on the first call
}

function extrasDigest(secret: Buffer, extras: Array<[string, string]>): string {
  return hmac(secret, new URLSearchParams(extras).toString()).slice(0, 12);
}

function encodeCursor(secret: Buffer, path: string, state: CursorState, digest: string): string {
  const payload = Buffer.from(JSON.stringify({ p: path, o: state.o, s: state.s, q: digest })).toString('base64url');
  return `${payload}.${hmac(secret, payload).slice(0, 22)}`;
}

function decodeCursor(secret: Buffer, path: string, cursor: string, digest: string): CursorState {
  const [payload, sig, extra] = cursor.split('.');
  if (payload === undefined || sig === undefined || extra !== undefined || hmac(secret, payload).slice(0, 22) !== sig) {
    throw new BadQuery('cursor is invalid.');
  }
  const v = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  if (v['p'] !== path) throw new BadQuery('cursor belongs to another collection.');
  // The cursor is bound to the rest of the query: a client that edits the link it was given is caught.
  if (v['q'] !== digest) throw new BadQuery('cursor does not match the query it was issued for.');
  return { o: v['o'] as number, s: v['s'] as number };
}

function cursorPage(
  c: StoredCollection,
  p: Params,
  extras: Array<[string, string]>,
  secret: Buffer,
  pageSize: number,
): Page {
  if (p.has('pageIndex')) throw new BadQuery('pageIndex is not accepted by a cursor-based collection.');
  const digest = extrasDigest(secret, extras);
  const cursor = p.get('cursor');
  let state: CursorState;
  if (cursor !== undefined) {
    if (p.has('pageSize')) throw new BadQuery('pageSize cannot be combined with cursor; use links as returned.');
    state = decodeCursor(secret, c.path, cursor, digest);
  } else {
    state = { o: 0, s: pageSize };
  }
  const { o, s } = state;
  const n = c.count;
  const from = Math.min(o, n);
  const to = Math.min(o + s, n);
  const first = `${c.path}?${query(extras, [['pageSize', String(s)]])}`;
  const at = (offset: number) =>
    offset === 0
      ? first
      : `${c.path}?${query(extras, [['cursor', encodeCursor(secret, c.path, { o: offset, s }, digest)]])}`;
  const links: Array<[string, string]> = [
    ['self', cursor === undefined ? first : `${c.path}?${query(extras, [['cursor', cursor]])}`],
    ['first', first],
  ];
  if (s > 0 && o + s < n) links.push(['next', at(o + s)]);
  if (s > 0 && o > 0) links.push(['prev', at(Math.max(0, o - s))]);
  if (c.lastLink) links.push(['last', at(s === 0 || n === 0 ? 0 : Math.floor((n - 1) / s) * s)]);
  return c.totalKnown ? { totalItems: n, from, to, links } : { from, to, links };
}

export async function handleCollection(core: Core, ex: Exchange, c: StoredCollection): Promise<Reply> {
  if (!c.public) {
    const refusal = authenticate(core, ex);
    if (refusal) return refusal;
  }
  const p = parseParams(ex.query, false);
  let page: Page;
  try {
    if (p.duplicates.length > 0) throw new BadQuery(`${p.duplicates[0]} was sent more than once.`);
    // RFC 6750 §2.3 allows tokens in the URI but they end up in logs; idcli must use the header.
    if (p.has('access_token')) throw new BadQuery('access_token in the URL is refused; use the Authorization header.');
    const extras = p.entries.filter(([k]) => k !== 'pageIndex' && k !== 'pageSize' && k !== 'cursor');
    const size = pageSizeParam(core, p);
    const secret = core.collections.cursorSecret;
    page = c.type === 'offset' ? offsetPage(c, p, extras, size) : cursorPage(c, p, extras, secret, size);
  } catch (err) {
    if (err instanceof BadQuery) return badRequest(err.message, err.status);
    if (err instanceof SyntaxError) return badRequest('cursor is invalid.');
    throw err;
  }
  const links: Array<[string, string]> = [];
  for (const [name, target] of page.links) {
    const href = c.linkStyle === 'relative' ? target : `${core.baseUrl}${target}`;
    if (name === 'next' && ex.nextOverride) continue;
    links.push([name, linkText(c.linkStyle, href, c.pretty) as string]);
  }
  if (ex.nextOverride) {
    const text = linkText(c.linkStyle, ex.nextOverride.href, c.pretty);
    // A fault may also add a next link to the last page, so place it where it would normally be.
    if (text !== undefined) links.splice(Math.min(2, links.length), 0, ['next', text]);
  }
  const { head, tail } = envelopeFrame({ ...page, hasItems: page.to > page.from, links }, c.pretty);
  const body = [Buffer.from(head), c.slice(page.from, page.to), Buffer.from(tail)];
  const load = ex.log.inFlight ?? 0;
  const latency =
    core.loadLatency && load > core.loadLatency.above ? core.loadLatency.msPerSquare * load ** 2 : core.latencyMs;
  if (latency > 0) await core.sleep(latency);
  return {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body,
    cacheKey: `${c.id}\n${page.from}\n${page.to}\n${head}\n${tail}`,
  };
}

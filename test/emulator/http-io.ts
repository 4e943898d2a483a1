// Small HTTP helpers: reading bodies, strict parameter parsing, cookies and the reply value handlers return.
import type { IncomingMessage } from 'node:http';

export interface Reply {
  status: number;
  headers?: Record<string, string | string[]>;
  /** Chunks are written in order without being joined (large pages go to the socket without a copy). */
  body?: string | Buffer | Buffer[];
  /** Names the body's bytes exactly, so an encoded copy can be reused for the same body. */
  cacheKey?: string;
}

export interface Params {
  get(name: string): string | undefined;
  has(name: string): boolean;
  /** Names sent more than once (RFC 6749 §3.1: parameters MUST NOT be included more than once). */
  duplicates: string[];
  entries: Array<[string, string]>;
}

/**
 * Parses a query string or an application/x-www-form-urlencoded body. With `omitEmpty`, a parameter sent
 * without a value counts as absent (RFC 6749 §3.1), so `a=&a=x` is not a duplicate.
 */
export function parseParams(text: string, omitEmpty: boolean): Params {
  const values = new Map<string, string>();
  const duplicates = new Set<string>();
  const entries: Array<[string, string]> = [];
  for (const [name, value] of new URLSearchParams(text)) {
    entries.push([name, value]);
    if (omitEmpty && value === '') continue;
    if (values.has(name)) duplicates.add(name);
    else values.set(name, value);
  }
  return {
    get: (name) => values.get(name),
    has: (name) => values.has(name),
    duplicates: [...duplicates],
    entries,
  };
}

export function formRecord(p: Params): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of p.entries) if (!(name in out)) out[name] = value;
  return out;
}

export const BODY_LIMIT = 1024 * 1024;

/** The whole body, or null when it exceeds the limit (the caller answers 413). */
export async function readBody(req: IncomingMessage, limit = BODY_LIMIT): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooBig = false;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) tooBig = true;
    else chunks.push(buf);
  }
  return tooBig ? null : Buffer.concat(chunks);
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
}

export function json(status: number, value: unknown, headers: Record<string, string> = {}): Reply {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(value),
  };
}

export function html(status: number, text: string, headers: Record<string, string | string[]> = {}): Reply {
  return {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      ...headers,
    },
    body: text,
  };
}

export function redirect(location: string, headers: Record<string, string | string[]> = {}): Reply {
  return { status: 302, headers: { location, 'cache-control': 'no-store', ...headers } };
}

export function methodNotAllowed(allow: string): Reply {
  return json(405, { error: 'method_not_allowed', error_description: `Use ${allow}.` }, { allow });
}

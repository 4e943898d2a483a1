// Writing a reply: encoded in the negotiated coding, after the link's latency, paced by its bandwidth.
import type { ServerResponse } from 'node:http';
import { type Coding, type EncodedCache, encode, MIN_COMPRESSED_BODY } from './compression.js';
import type { Reply } from './http-io.js';
import { type Link, LINK_PIECE } from './link.js';

export interface Delivery {
  link: Link;
  cache: EncodedCache;
  /** The coding negotiated for this request. */
  coding: Coding;
  /** Announce the full length, deliver half of the body, then cut the connection. */
  truncate?: boolean;
}

function chunks(body: Reply['body']): Buffer[] {
  if (body === undefined) return [];
  if (Array.isArray(body)) return body;
  return [Buffer.from(body)];
}

/**
 * The reply's headers and body as they will be sent. Every reply names Accept-Encoding in Vary, since the
 * emulator would have chosen another coding for another Accept-Encoding (RFC 9110 §12.5.5). A reply that
 * already carries a Content-Encoding (a fault's) is sent as it is.
 */
async function encoded(reply: Reply, coding: Coding, cache: EncodedCache) {
  const headers: Record<string, string | string[]> = { ...reply.headers, vary: 'accept-encoding' };
  const parts = chunks(reply.body);
  const length = parts.reduce((sum, b) => sum + b.length, 0);
  const labelled = Object.keys(headers).some((name) => name.toLowerCase() === 'content-encoding');
  if (coding === 'identity' || labelled || length < MIN_COMPRESSED_BODY) {
    return { headers, parts, length };
  }
  const whole = () => (parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, length));
  const body =
    reply.cacheKey === undefined ? await encode(whole(), coding) : await cache.get(reply.cacheKey, coding, whole);
  headers['content-encoding'] = coding;
  return { headers, parts: [body], length: body.length };
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

function flushed(res: ServerResponse, piece: Buffer): Promise<void> {
  return new Promise((resolve) => res.write(piece, () => resolve()));
}

/** Head and body through the link's byte budget, in pieces; the head is charged at its exact size on the wire. */
async function paced(res: ServerResponse, parts: Buffer[], link: Link, truncate: boolean): Promise<void> {
  const socket = res.socket;
  const before = socket?.bytesWritten ?? 0;
  res.flushHeaders();
  await link.take((socket?.bytesWritten ?? before) - before);
  const pieces = parts.flatMap((part) => {
    const out: Buffer[] = [];
    for (let at = 0; at < part.length; at += LINK_PIECE) out.push(part.subarray(at, at + LINK_PIECE));
    return out;
  });
  for (const [i, piece] of pieces.entries()) {
    await link.take(piece.length);
    if (res.destroyed) return;
    if (truncate && i === pieces.length - 1) await flushed(res, piece);
    else if (!res.write(piece)) await drained(res);
  }
  if (truncate) res.destroy();
  else res.end();
}

/** At socket speed: all chunks in one writev. */
function direct(res: ServerResponse, parts: Buffer[], truncate: boolean): void {
  if (!truncate) {
    res.cork();
    for (const part of parts) res.write(part);
    res.end();
    res.uncork();
    return;
  }
  res.flushHeaders();
  const cut = Buffer.concat(parts);
  res.write(cut, () => res.destroy());
}

export async function send(res: ServerResponse, reply: Reply, d: Delivery): Promise<void> {
  const { headers, parts, length } = await encoded(reply, d.coding, d.cache);
  await d.link.delay();
  if (res.destroyed) return;
  res.writeHead(reply.status, { ...headers, 'content-length': String(length) });
  // A premature close mid-body: the full length announced, half of it delivered.
  const body = d.truncate ? [Buffer.concat(parts).subarray(0, Math.floor(length / 2))] : parts;
  if (d.link.shaped) await paced(res, res.req.method === 'HEAD' ? [] : body, d.link, d.truncate ?? false);
  else direct(res, body, d.truncate ?? false);
}

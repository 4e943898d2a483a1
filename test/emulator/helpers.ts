// Helpers for the emulator's own tests: plain fetch calls, as an honest client would make them.
import { randomBytes } from 'node:crypto';
import { type IncomingHttpHeaders, request } from 'node:http';
import { afterEach, beforeEach, expect } from 'vitest';
import { type Emulator, type EmulatorOptions, s256, startEmulator } from './index.js';

export interface PkcePair {
  verifier: string;
  challenge: string;
}

export function pkcePair(): PkcePair {
  const verifier = randomBytes(48).toString('base64url'); // 64 characters of the unreserved set
  return { verifier, challenge: s256(verifier) };
}

export function authorizeUrl(
  emu: Emulator,
  challenge: string,
  overrides: Record<string, string | undefined> = {},
): string {
  const params: Record<string, string | undefined> = {
    client_id: emu.client.id,
    response_type: 'code',
    scope: `openid ${emu.client.name}`,
    redirect_uri: emu.client.callbackUrl,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-123',
    ...overrides,
  };
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.append(k, v);
  return `${emu.baseUrl}/oauth/authorize?${q.toString()}`;
}

export function get(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { redirect: 'manual', headers });
}

export function postForm(
  url: string,
  fields: Record<string, string> | string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: typeof fields === 'string' ? fields : new URLSearchParams(fields).toString(),
  });
}

export function txOf(html: string): string {
  const m = /<input type="hidden" name="tx" value="([^"]+)">/.exec(html);
  if (!m?.[1]) throw new Error('no transaction id in the page');
  return m[1];
}

/** The query of a redirect Location, as a plain record. */
export function locationQuery(res: Response): URLSearchParams {
  const location = res.headers.get('location');
  if (location === null) throw new Error(`no Location (status ${res.status})`);
  return new URL(location).searchParams;
}

export interface SignIn {
  code: string;
  location: string;
  cookie: string;
  pkce: PkcePair;
}

/** Walks the real sign-in form: authorize → form → POST credentials → 302 to the callback with a code. */
export async function signIn(emu: Emulator, overrides: Record<string, string | undefined> = {}): Promise<SignIn> {
  const pkce = pkcePair();
  const page = await get(authorizeUrl(emu, pkce.challenge, overrides));
  if (page.status !== 200) throw new Error(`authorize answered ${page.status}`);
  const res = await postForm(`${emu.baseUrl}/oauth/login`, {
    tx: txOf(await page.text()),
    email: emu.user.email,
    password: emu.user.password,
    action: 'login',
  });
  const location = res.headers.get('location');
  const code = location === null ? null : new URL(location).searchParams.get('code');
  if (res.status !== 302 || code === null || location === null) throw new Error(`sign-in answered ${res.status}`);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return { code, location, cookie, pkce };
}

export interface TokenReply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

export async function token(
  emu: Emulator,
  fields: Record<string, string> | string,
  headers: Record<string, string> = {},
): Promise<TokenReply> {
  const res = await postForm(`${emu.baseUrl}/oauth/token`, fields, { accept: 'application/json', ...headers });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

export function exchangeFields(emu: Emulator, code: string, verifier: string, next?: PkcePair): Record<string, string> {
  return {
    grant_type: 'authorization_code',
    code,
    client_id: emu.client.id,
    redirect_uri: emu.client.callbackUrl,
    code_verifier: verifier,
    ...(next ? { code_challenge: next.challenge, code_challenge_method: 'S256' } : {}),
  };
}

export function refreshFields(emu: Emulator, refreshToken: string, verifier: string, next: PkcePair) {
  return {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: emu.client.id,
    code_verifier: verifier,
    code_challenge: next.challenge,
    code_challenge_method: 'S256',
  };
}

export function bearer(accessToken: string): Record<string, string> {
  return { authorization: `Bearer ${accessToken}` };
}

export async function getJson(url: string, headers: Record<string, string> = {}) {
  const res = await get(url, headers);
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: JSON.parse(text) as Record<string, unknown> };
}

/** The href of a link member, whether it is {href} or a plain string. */
export function href(link: unknown): string | undefined {
  if (typeof link === 'string') return link;
  if (typeof link === 'object' && link !== null && typeof (link as { href?: unknown }).href === 'string') {
    return (link as { href: string }).href;
  }
  return undefined;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body exactly as it came off the wire, not decoded. */
  body: Buffer;
}

/**
 * A GET through node:http, which neither adds an Accept-Encoding nor decodes: the test sees the bytes the
 * emulator sent. `method` may be HEAD.
 */
export function rawGet(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Registers, for every test of the calling suite, a fresh emulator and a bearer header for a token it minted,
 * handed to `use` before the test; afterwards the emulator must have seen no error of its own, and is closed.
 */
export function eachEmulator(
  use: (emu: Emulator, auth: Record<string, string>) => void,
  options: EmulatorOptions = {},
): void {
  let emu: Emulator;
  beforeEach(async () => {
    emu = await startEmulator(options);
    use(emu, bearer(emu.mintTokens().access_token));
  });
  afterEach(async () => {
    expect(emu.errors).toEqual([]);
    await emu.close();
  });
}

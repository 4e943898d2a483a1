// The curl convention that undici's EnvHttpProxyAgent follows too: lower case wins over upper case.
import { usageError } from '../errors.js';

export type Env = Record<string, string | undefined>;

export interface ProxyEnv {
  httpProxy?: URL;
  /** https_proxy, else the http proxy. */
  httpsProxy?: URL;
  /** The no_proxy list exactly as given ('' when unset); undici gets it through noProxyForUndici, as proxyFor reads it. */
  noProxy: string;
  /** Which variable each proxy came from, for messages. */
  httpVar?: string;
  httpsVar?: string;
}

const PROXY_VARIABLES = ['https_proxy', 'HTTPS_PROXY', 'http_proxy', 'HTTP_PROXY'] as const;

/** Cheap and never throws: it decides whether undici is loaded at all, so the common case pays nothing. */
export function wantsProxy(env: Env): boolean {
  if (!PROXY_VARIABLES.some((v) => isSet(env[v]))) return false;
  // NO_PROXY=* sends everything direct: the plain transport does that without loading undici.
  return noProxyValue(env).trim() !== '*';
}

/** A value that is not a usable proxy URL is a usage error naming the variable, never its value (a password). */
export function readProxyEnv(env: Env): ProxyEnv | undefined {
  const httpVar = firstSet(env, ['http_proxy', 'HTTP_PROXY']);
  const httpsVar = firstSet(env, ['https_proxy', 'HTTPS_PROXY']);
  if (httpVar === undefined && httpsVar === undefined) return undefined;
  const httpProxy = httpVar === undefined ? undefined : parseProxyUrl(httpVar, env);
  // undici's EnvHttpProxyAgent sends https:// targets through the http proxy when no https proxy is given.
  const httpsProxy = httpsVar === undefined ? httpProxy : parseProxyUrl(httpsVar, env);
  return { httpProxy, httpsProxy, noProxy: noProxyValue(env), httpVar, httpsVar: httpsVar ?? httpVar };
}

/** The proxy for `target`, for messages only: undici keeps its no_proxy decision private, so it is mirrored here. */
export function proxyFor(target: URL, proxy: ProxyEnv): URL | undefined {
  const via =
    target.protocol === 'https:' ? proxy.httpsProxy : target.protocol === 'http:' ? proxy.httpProxy : undefined;
  if (!via) return undefined;
  return bypassed(target, proxy.noProxy) ? undefined : via;
}

/** The proxy as it may be shown to the user: scheme, host and port, never the credentials. */
export function showProxy(proxy: URL): string {
  return proxy.origin;
}

/**
 * The no_proxy list in the form undici matches: an IPv6 address bracketed and in its shortest form, as a URL's host
 * is. curl takes `::1` and `[::1]` alike; undici would read a bare `::1` as the host `:` on port 1.
 */
export function noProxyForUndici(noProxy: string): string {
  if (noProxy.trim() === '*') return '*';
  return noProxy
    .split(/[,\s]/)
    .filter((entry) => entry !== '')
    .map(bracketIpv6)
    .join(',');
}

function bracketIpv6(entry: string): string {
  const bracketed = /^\[([^\]]*)\](:\d+)?$/.exec(entry);
  // Unbracketed, two colons or more can only be an address (as curl reads it), never host:port.
  const address = bracketed ? bracketed[1] : (entry.match(/:/g)?.length ?? 0) >= 2 ? entry : undefined;
  if (address === undefined) return entry;
  const url = `http://[${address}]/`;
  return `${URL.canParse(url) ? new URL(url).hostname : `[${address}]`}${bracketed?.[2] ?? ''}`;
}

function bypassed(target: URL, noProxy: string): boolean {
  const value = noProxyForUndici(noProxy);
  if (value === '') return false;
  if (value === '*') return true;
  const host = target.host.replace(/:\d*$/, '').toLowerCase();
  const port = Number.parseInt(target.port, 10) || (target.protocol === 'https:' ? 443 : 80);
  for (const raw of value.split(',')) {
    const m = /^(.+):(\d+)$/.exec(raw);
    const entryHost = (m?.[1] ?? raw).replace(/^\*?\./, '').toLowerCase();
    const entryPort = m?.[2] ? Number.parseInt(m[2], 10) : 0;
    if (entryPort && entryPort !== port) continue;
    if (host === entryHost || host.endsWith(`.${entryHost}`)) return true;
  }
  return false;
}

const PROXY_FORM = 'use http://[user:password@]host:port';

function parseProxyUrl(variable: string, env: Env): URL {
  const trimmed = (env[variable] ?? '').trim();
  // curl accepts a bare host:port and assumes http://; without a scheme, URL would read "host:" as the scheme.
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
  if (!URL.canParse(withScheme))
    throw usageError('PROXY_URL_INVALID', `${variable} is not a valid proxy URL`, PROXY_FORM);
  const url = new URL(withScheme);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    const why = `uses ${url.protocol.slice(0, -1)}, but only http:// and https:// proxies are supported`;
    throw usageError('PROXY_URL_INVALID', `${variable} ${why}`, PROXY_FORM);
  }
  if (url.hostname === '') throw usageError('PROXY_URL_INVALID', `${variable} names no proxy host`, PROXY_FORM);
  return url;
}

function firstSet(env: Env, names: readonly string[]): string | undefined {
  return names.find((n) => isSet(env[n]));
}

function noProxyValue(env: Env): string {
  return env.no_proxy ?? env.NO_PROXY ?? '';
}

function isSet(v: string | undefined): boolean {
  return v !== undefined && v.trim() !== '';
}

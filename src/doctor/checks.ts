/**
 * The checks behind `idcli doctor`. Each returns a verdict and, when something is off, the fix to apply; none of
 * them changes anything. Inputs arrive as arguments so each check can be exercised on its own.
 */
import { lookup } from 'node:dns/promises';
import { createServer } from 'node:net';
import { CONFIG_KEYS, howToSet, type ConfigKey, type Settings } from '../config.js';
import { IdcliError } from '../errors.js';
import type { HttpClient } from '../http/client.js';
import { headerValue, NetworkError } from '../http/types.js';
import { redactUrl } from '../redact.js';

export type Verdict = 'pass' | 'warn' | 'fail';

export interface CheckResult {
  id: string;
  title: string;
  status: Verdict;
  detail: string;
  fix?: string;
}

const REQUIRED_FOR_LOGIN: ConfigKey[] = ['base-url', 'client-id', 'client-name', 'redirect-uri'];

export function checkConfig(settings: Settings | IdcliError): CheckResult {
  const title = 'configuration';
  if (settings instanceof IdcliError) {
    return {
      id: 'config',
      title,
      status: 'fail',
      detail: settings.message,
      ...(settings.hint ? { fix: settings.hint } : {}),
    };
  }
  const missing = REQUIRED_FOR_LOGIN.filter((k) => settings[CONFIG_KEYS[k].field] === undefined);
  if (missing.length > 0) {
    return {
      id: 'config',
      title,
      status: 'fail',
      detail: `profile '${settings.profile}' lacks ${missing.join(', ')}`,
      fix: missing.map((k) => `set ${k} with ${howToSet(k)}`).join('; '),
    };
  }
  return {
    id: 'config',
    title,
    status: 'pass',
    detail: `profile '${settings.profile}' is complete and its URLs are valid`,
  };
}

export interface Reachability {
  result: CheckResult;
  /** The server's clock, from its Date header, when it answered. */
  serverDate?: number;
  /** Our clock when the answer arrived. */
  localDate?: number;
}

/** Any HTTP answer from the authorization endpoint proves the service is there; only the transport can fail. */
export async function checkReachable(
  baseUrl: string,
  http: HttpClient,
  now: () => number,
  signal: AbortSignal,
): Promise<Reachability> {
  const url = `${baseUrl}/oauth/authorize`;
  const title = 'identity service reachable';
  try {
    const res = await http.request({ method: 'GET', url, timeoutMs: 5000, signal, headers: { accept: 'text/html' } });
    const date = headerValue(res.headers, 'date');
    const serverDate = date ? Date.parse(date) : Number.NaN;
    const out: Reachability = {
      result: { id: 'reachable', title, status: 'pass', detail: `${redactUrl(url)} answered HTTP ${res.status}` },
      localDate: now(),
    };
    if (!Number.isNaN(serverDate)) out.serverDate = serverDate;
    return out;
  } catch (err) {
    const reason = err instanceof NetworkError ? err.message : (err as Error).message;
    return {
      result: {
        id: 'reachable',
        title,
        status: 'fail',
        detail: `${redactUrl(url)}: ${reason}`,
        fix: 'check base-url, your network, and HTTPS_PROXY/NO_PROXY if you are behind a proxy',
      },
    };
  }
}

/** Expiry checks compare our clock with times the server issued; a skewed clock refreshes too early or too late. */
export function checkClockSkew(serverDate: number | undefined, localDate: number | undefined): CheckResult {
  const title = 'clock skew';
  if (serverDate === undefined || localDate === undefined) {
    return {
      id: 'clock',
      title,
      status: 'warn',
      detail: 'the server sent no Date header (or was not reached); skew unknown',
    };
  }
  // The Date header has one-second resolution, so a second or two of difference is noise.
  const skew = Math.round((localDate - serverDate) / 1000);
  const detail =
    skew === 0
      ? 'in step with the server'
      : `this machine is ${Math.abs(skew)} s ${skew > 0 ? 'ahead of' : 'behind'} the server`;
  if (Math.abs(skew) <= 60) return { id: 'clock', title, status: 'pass', detail };
  return {
    id: 'clock',
    title,
    status: Math.abs(skew) > 300 ? 'fail' : 'warn',
    detail,
    fix: 'synchronise the clock (e.g. `timedatectl set-ntp true`)',
  };
}

export async function checkRedirectPort(redirectUri: string | undefined): Promise<CheckResult> {
  const title = 'redirect port free';
  if (!redirectUri)
    return {
      id: 'port',
      title,
      status: 'fail',
      detail: 'redirect-uri is not set',
      fix: `set it with ${howToSet('redirect-uri')}`,
    };
  const url = new URL(redirectUri);
  const port = Number(url.port);
  if (port === 0) return { id: 'port', title, status: 'pass', detail: 'port 0: a free port is picked at each sign-in' };
  const hosts = url.hostname === 'localhost' ? ['127.0.0.1', '::1'] : [url.hostname.replace(/^\[|\]$/g, '')];
  for (const host of hosts) {
    const err = await tryListen(host, port);
    if (err === 'EADDRINUSE') {
      return {
        id: 'port',
        title,
        status: 'fail',
        detail: `port ${port} on ${host} is in use by another process`,
        fix: `stop the process listening on ${host}:${port} (e.g. \`ss -ltnp 'sport = :${port}'\`) or register another redirect URI`,
      };
    }
    if (err === 'EACCES') {
      return {
        id: 'port',
        title,
        status: 'fail',
        detail: `not allowed to listen on ${host}:${port}`,
        fix: 'use a port above 1024 in the redirect URI',
      };
    }
    // An address family this machine lacks (no IPv6) is reported by the localhost check, not here.
  }
  return { id: 'port', title, status: 'pass', detail: `${hosts.join(' and ')} port ${port} can be bound` };
}

function tryListen(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'ERROR'));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/** RFC 8252 §8.3: `localhost` may resolve to either family; a listener on one lets another process take the other. */
export async function checkLocalhost(
  redirectUri: string | undefined,
  resolve = (h: string) => lookup(h, { all: true }),
): Promise<CheckResult> {
  const title = 'localhost resolution';
  let families: number[] = [];
  try {
    families = [...new Set((await resolve('localhost')).map((a) => a.family))].sort();
  } catch (err) {
    return {
      id: 'localhost',
      title,
      status: 'warn',
      detail: `localhost does not resolve: ${(err as Error).message}`,
      fix: 'use http://127.0.0.1:<port>/… as redirect URI',
    };
  }
  const detail = `localhost resolves to ${families.map((f) => `IPv${f}`).join(' and ')}`;
  const usesLocalhost = redirectUri !== undefined && new URL(redirectUri).hostname === 'localhost';
  if (!usesLocalhost || families.length === 2) {
    return {
      id: 'localhost',
      title,
      status: 'pass',
      detail: usesLocalhost ? `${detail}; idcli listens on both` : `${detail}; the redirect URI uses an IP literal`,
    };
  }
  return {
    id: 'localhost',
    title,
    status: 'warn',
    detail: `${detail} only`,
    fix: 'prefer an IP literal (http://127.0.0.1:<port>/…) in the redirect URI, as RFC 8252 §8.3 recommends',
  };
}

export interface StoreProbe {
  kind: 'keychain' | 'file';
  description: string;
  warning?: string;
}

export function checkStore(mode: Settings['credentialStore'], probe: StoreProbe | IdcliError): CheckResult {
  const title = 'credential store';
  if (probe instanceof IdcliError) {
    return {
      id: 'store',
      title,
      status: 'fail',
      detail: probe.message,
      fix: probe.hint ?? 'set IDCLI_CREDENTIAL_STORE=file to use the file store',
    };
  }
  if (probe.kind === 'file' && mode === 'auto') {
    return {
      id: 'store',
      title,
      status: 'warn',
      detail: `no usable keychain${probe.warning ? ` (${probe.warning})` : ''}; using ${probe.description}`,
      fix: 'start a Secret Service (e.g. gnome-keyring) or set IDCLI_CREDENTIAL_STORE=file to silence this',
    };
  }
  return { id: 'store', title, status: 'pass', detail: `using ${probe.description}` };
}

const PROXY_VARS = [
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'NO_PROXY',
  'https_proxy',
  'http_proxy',
  'no_proxy',
  'NODE_EXTRA_CA_CERTS',
];

export function checkProxy(env: Record<string, string | undefined>): CheckResult {
  const set = PROXY_VARS.filter((v) => env[v]);
  if (set.length === 0)
    return { id: 'proxy', title: 'proxy settings', status: 'pass', detail: 'no proxy variables; direct connections' };
  const shown = set.map(
    (v) => `${v}=${v.toLowerCase().includes('proxy') && v.toLowerCase() !== 'no_proxy' ? redactUrl(env[v]!) : env[v]}`,
  );
  return { id: 'proxy', title: 'proxy settings', status: 'pass', detail: `in effect: ${shown.join(', ')}` };
}

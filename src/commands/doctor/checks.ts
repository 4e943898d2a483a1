/** The checks behind `idcli doctor`: each a verdict and, when something is off, the fix; none changes anything. */
import { lookup } from 'node:dns/promises';
import { createServer } from 'node:net';
import { isSea } from 'node:sea';
import { howToSet, type ConfigKey, SETTINGS, type Settings } from '../../config.js';
import { IdcliError } from '../../errors.js';
import { errMessage } from '../../shape.js';
import type { CredentialStore } from '../../store/interface.js';
import type { HttpClient } from '../../http/client.js';
import { headerValue } from '../../http/types.js';
import type { Env } from '../../http/proxy-env.js';
import { HOW_TO_TRUST } from '../../http/network-errors.js';
import { redactUrl } from '../../redact.js';
import { bindAddresses, parseRedirectUri } from '../../redirect-uri.js';
import { type Clock, type Timer, timeoutSignal } from '../../clock.js';

export type Verdict = 'pass' | 'warn' | 'fail';

export type CheckResult = {
  id: string;
  title: string;
  status: Verdict;
  detail: string;
  fix?: string;
  /** The TLS checks': what the server showed, and where idcli's trust in it comes from. */
  certificate?: CertificateFinding;
};

export type CertificateFinding = {
  subject: string;
  issuer: string;
  /** The CA the chain ends at. */
  ca: string;
  /** Which store idcli trusts that CA from; absent when none does. */
  trustedBy?: string;
  /** Whether the CA is one of Node's bundled public roots; when not, most often a network inspecting TLS. */
  publicRoot: boolean;
};

/** The verdicts of one check, each built with the fields in the order `doctor --json` prints them. */
export function check(id: string, title: string) {
  return (status: Verdict, detail: string, fix?: string): CheckResult =>
    fix === undefined ? { id, title, status, detail } : { id, title, status, detail, fix };
}

const REQUIRED_FOR_LOGIN: ConfigKey[] = ['base-url', 'client-id', 'client-name', 'redirect-uri'];

export function checkConfig(settings: Settings | IdcliError): CheckResult {
  const verdict = check('config', 'configuration');
  if (settings instanceof IdcliError) return verdict('fail', settings.message, settings.hint || undefined);
  const missing = REQUIRED_FOR_LOGIN.filter((k) => settings[SETTINGS[k].field] === undefined);
  if (missing.length === 0) return verdict('pass', `profile '${settings.profile}' is complete and its URLs are valid`);
  return verdict(
    'fail',
    `profile '${settings.profile}' lacks ${missing.join(', ')}`,
    missing.map((k) => `set ${k} with ${howToSet(k)}`).join('; '),
  );
}

export interface Reachability {
  result: CheckResult;
  /** The server's clock (its Date header) and ours when the answer arrived. */
  serverDate?: number;
  localDate?: number;
}

const reachable = check('reachable', 'identity service reachable');

export function reachableSkipped(): CheckResult {
  return reachable('fail', 'skipped: base-url is not set or invalid', 'fix the configuration first');
}

/** The most a check waiting on the outside may take: a diagnosis must not stall on a silent or dribbling host. */
const CHECK_DEADLINE_MS = 5000;

const overDeadline = () =>
  `no complete answer within ${CHECK_DEADLINE_MS / 1000} s, the most doctor waits for one check`;

/** Any HTTP answer from the authorization endpoint proves the service is there; only the transport can fail. */
export async function checkReachable(
  baseUrl: string,
  http: HttpClient,
  clock: Clock,
  signal: AbortSignal,
): Promise<Reachability> {
  const url = `${baseUrl}/oauth/authorize`;
  const timeout = timeoutSignal(clock, CHECK_DEADLINE_MS);
  const deadline = timeout.signal;
  const request = { method: 'GET', url, timeoutMs: CHECK_DEADLINE_MS, headers: { accept: 'text/html' } };
  try {
    const res = await http.request({ ...request, signal: AbortSignal.any([signal, deadline]) });
    const date = headerValue(res.headers, 'date');
    const serverDate = date ? Date.parse(date) : Number.NaN;
    const result = reachable('pass', `${redactUrl(url)} answered HTTP ${res.status}`);
    return { result, localDate: clock.now(), ...(!Number.isNaN(serverDate) && { serverDate }) };
  } catch (err) {
    // node:http and dns reject with Errors.
    const why = deadline.aborted && !signal.aborted ? overDeadline() : errMessage(err);
    return {
      result: reachable(
        'fail',
        `${redactUrl(url)}: ${why}`,
        'check base-url, your network, and HTTPS_PROXY/NO_PROXY if you are behind a proxy',
      ),
    };
  } finally {
    timeout.clear();
  }
}

/** Expiry checks compare our clock with times the server issued; a skewed clock refreshes too early or too late. */
export function checkClockSkew(serverDate: number | undefined, localDate: number | undefined): CheckResult {
  const verdict = check('clock', 'clock skew');
  if (serverDate === undefined || localDate === undefined)
    return verdict('warn', 'the server sent no Date header (or was not reached); skew unknown');
  // The Date header has one-second resolution, so a second or two of difference is noise.
  const skew = Math.round((localDate - serverDate) / 1000);
  const ahead = skew > 0 ? 'ahead of' : 'behind';
  const detail = skew === 0 ? 'in step with the server' : `this machine is ${Math.abs(skew)} s ${ahead} the server`;
  if (Math.abs(skew) <= 60) return verdict('pass', detail);
  return verdict(
    Math.abs(skew) > 300 ? 'fail' : 'warn',
    detail,
    'synchronise the clock (e.g. `timedatectl set-ntp true`)',
  );
}

export async function checkRedirectPort(redirectUri: string | undefined): Promise<CheckResult> {
  const verdict = check('port', 'redirect port free');
  if (!redirectUri) return verdict('fail', 'redirect-uri is not set', `set it with ${howToSet('redirect-uri')}`);
  const parsed = parseRedirectUri(redirectUri);
  if (!parsed)
    return verdict('fail', 'redirect-uri is not a loopback http URI', `set it with ${howToSet('redirect-uri')}`);
  const { port } = parsed;
  if (port === 0) return verdict('pass', 'port 0: a free port is picked at each sign-in');
  const hosts = bindAddresses(parsed.host);
  for (const host of hosts) {
    const err = await tryListen(host, port);
    if (err === 'EADDRINUSE')
      return verdict(
        'fail',
        `port ${port} on ${host} is in use by another process`,
        `stop the process listening on ${host}:${port} (e.g. \`ss -ltnp 'sport = :${port}'\`) or register another redirect URI`,
      );
    if (err === 'EACCES')
      return verdict('fail', `not allowed to listen on ${host}:${port}`, 'use a port above 1024 in the redirect URI');
    // An address family this machine lacks (no IPv6) is reported by the localhost check, not here.
  }
  return verdict('pass', `${hosts.join(' and ')} port ${port} can be bound`);
}

function tryListen(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'ERROR'));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/** RFC 8252 §8.3: `localhost` may resolve to either family; a listener on one lets another process take the other. */
export async function checkLocalhost(redirectUri: string | undefined, clock: Clock): Promise<CheckResult> {
  const verdict = check('localhost', 'localhost resolution');
  let families: number[] = [];
  try {
    const addresses = await withinDeadline(lookup('localhost', { all: true }), clock);
    families = [...new Set(addresses.map((a) => a.family))].sort();
  } catch (err) {
    return verdict(
      'warn',
      `localhost does not resolve: ${errMessage(err)}`,
      'use http://127.0.0.1:<port>/… as redirect URI',
    );
  }
  const detail = `localhost resolves to ${families.map((f) => `IPv${f}`).join(' and ')}`;
  const usesLocalhost = redirectUri !== undefined && new URL(redirectUri).hostname === 'localhost';
  if (!usesLocalhost) return verdict('pass', `${detail}; the redirect URI uses an IP literal`);
  if (families.length === 2) return verdict('pass', `${detail}; idcli listens on both`);
  return verdict(
    'warn',
    `${detail} only`,
    'prefer an IP literal (http://127.0.0.1:<port>/…) in the redirect URI, as RFC 8252 §8.3 recommends',
  );
}

/** `work`, or a failure once CHECK_DEADLINE_MS ran out, for a step that takes no signal (a name lookup). */
function withinDeadline<T>(work: Promise<T>, clock: Clock): Promise<T> {
  let timer: Timer | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = clock.setTimeout(() => reject(new Error(overDeadline())), CHECK_DEADLINE_MS);
  });
  return Promise.race([work, late]).finally(() => timer?.clear());
}

export type StoreProbe = { kind: CredentialStore['kind']; description: string; warning?: string };

export function checkStore(mode: Settings['credentialStore'], probe: StoreProbe | IdcliError): CheckResult {
  const verdict = check('store', 'credential store');
  if (probe instanceof IdcliError)
    return verdict('fail', probe.message, probe.hint ?? 'set IDCLI_CREDENTIAL_STORE=file to use the file store');
  if (probe.kind === 'file' && mode === 'auto')
    return verdict(
      'warn',
      `no usable keychain${probe.warning ? ` (${probe.warning})` : ''}; using ${probe.description}`,
      'start a Secret Service (e.g. gnome-keyring) or set IDCLI_CREDENTIAL_STORE=file to silence this',
    );
  return verdict('pass', `using ${probe.description}`);
}

const PROXY_NAMES = ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY'];
const PROXY_VARS = [...PROXY_NAMES, ...PROXY_NAMES.map((v) => v.toLowerCase()), 'NODE_EXTRA_CA_CERTS'];

export function checkProxy(env: Record<string, string | undefined>): CheckResult {
  const verdict = check('proxy', 'proxy settings');
  const set = PROXY_VARS.filter((v) => env[v]);
  if (set.length === 0) return verdict('pass', 'no proxy variables; direct connections');
  const shown = set.map(
    (v) => `${v}=${v.toLowerCase().includes('proxy') && v.toLowerCase() !== 'no_proxy' ? redactUrl(env[v]!) : env[v]}`,
  );
  return verdict('pass', `in effect: ${shown.join(', ')}`);
}

/** Which Node runs idcli, and whether it is the single executable's: a report about a problem starts with that. */
export function checkRuntime(): CheckResult {
  const verdict = check('runtime', 'runtime');
  if (isSea()) return verdict('pass', `single executable ${process.execPath}, carrying Node ${process.version}`);
  return verdict('pass', `Node ${process.version} at ${process.execPath}, running the npm package`);
}

const STORE_NAMES = { node: "Node's bundled roots", extra: 'NODE_EXTRA_CA_CERTS' } as const;

/** Where a CA of the system's store came from: the variables that replace OpenSSL's default paths, when set. */
function storeName(source: 'node' | 'system' | 'extra', env: Env): string {
  if (source !== 'system') return STORE_NAMES[source];
  const set = ['SSL_CERT_FILE', 'SSL_CERT_DIR'].filter((v) => env[v]);
  return set.length > 0 ? set.join(' / ') : "the system's CA store";
}

/**
 * Which CA issued what `url` shows idcli (through the proxy when one applies) and which store idcli trusts it from.
 * A CA outside Node's bundled public roots is most often a company network inspecting TLS, which is fine when it
 * is trusted on purpose; one that no store holds fails every request, and the fix says how to trust it.
 */
export async function checkCertificate(
  id: string,
  what: string,
  url: string,
  env: Env,
  signal: AbortSignal,
  clock: Clock,
): Promise<CheckResult> {
  const verdict = check(id, `${what} TLS certificate`);
  const target = new URL(url);
  if (target.protocol !== 'https:') return verdict('pass', `${redactUrl(url)} is not HTTPS: no certificate to check`);
  const { inspectServerCertificate } = await import('../../http/server-certificate.js');
  let shown;
  const timeout = timeoutSignal(clock, CHECK_DEADLINE_MS);
  try {
    shown = await inspectServerCertificate(target, env, AbortSignal.any([signal, timeout.signal]));
  } catch (err) {
    return verdict('fail', `${target.host}: could not read its certificate: ${errMessage(err)}`);
  } finally {
    timeout.clear();
  }
  const trustedBy = shown.trustedBy && storeName(shown.trustedBy, env);
  const certificate: CertificateFinding = {
    subject: shown.subject,
    issuer: shown.issuer,
    ca: shown.ca,
    ...(trustedBy ? { trustedBy } : {}),
    publicRoot: shown.publicRoot,
  };
  const seen = `${target.host} shows "${shown.subject}" issued by "${shown.issuer}"`;
  const inspection = shown.publicRoot
    ? ''
    : `; "${shown.ca}" is not one of Node's bundled public roots: likely TLS inspection by your network (or a private CA)`;
  const result = trustedBy
    ? verdict('pass', `${seen}, trusted through ${trustedBy} (CA "${shown.ca}")${inspection}`)
    : verdict('fail', `${seen}, a CA no trusted store holds${inspection}`, HOW_TO_TRUST);
  return { ...result, certificate };
}

/**
 * etcd's v3 API through its JSON gateway (`/v3/kv/range`, `/v3/kv/txn`, `/v3/lease/*`, `/v3/auth/authenticate`)
 * over idcli's own HTTP stack: no gRPC library to load, so a cached token costs one HTTP request. A member that does
 * not answer, or answers without a quorum, is skipped for the next one, as etcdctl's balancer does.
 */
import { type Clock, sleep, systemClock } from '../clock.js';
import { ExitCode, IdcliError, usageError } from '../errors.js';
import { createHttpClient, type HttpClient } from '../http/client.js';
import type { SecureContext } from 'node:tls';
import { HOW_TO_TRUST, UntrustedCertificate } from '../http/network-errors.js';
import { headerValue, type HttpHeaders, NetworkError } from '../http/types.js';
import { isJsonObject, type JsonObject } from '../shape.js';

/** One member's answer must come within this; a member cut off from the others would otherwise hold the run. */
const MEMBER_DEADLINE_MS = 5_000;
/** How long a call keeps trying the members: longer than an election, short enough to say soon that none answers. */
const CALL_PATIENCE_MS = 8_000;
const PASS_PAUSE_MS = 250;

// gRPC status codes the gateway puts in its error bodies (grpc/codes).
const INVALID_ARGUMENT = 3;
const DEADLINE_EXCEEDED = 4;
const PERMISSION_DENIED = 7;
const FAILED_PRECONDITION = 9;
const UNAVAILABLE = 14;
const UNAUTHENTICATED = 16;

export interface EtcdUser {
  name: string;
  password: string;
}

export interface EtcdClientOptions {
  endpoints: readonly string[];
  user?: EtcdUser;
  /** The TLS context https:// members are verified against (etcd-trust.ts). */
  trust?: () => Promise<SecureContext>;
  log?: { verbose(msg: string): void; isVerbose?: boolean };
  /** The clock of a call's patience, its pauses and each member's deadline; the machine's by default. */
  clock?: Clock;
}

/** A key-value pair as the gateway gives it, decoded. */
export interface EtcdKv {
  key: string;
  value: string;
  modRevision: number;
  lease: string;
}

/** A member's answer, and its clock when it answered (the Date header; undefined without one). */
export interface MemberAnswer {
  json: JsonObject;
  date: number | undefined;
}

/** Why one member gave no answer: the call goes on to the next member. */
class MemberFailure {
  constructor(
    readonly endpoint: string,
    readonly reason: string,
    /** Asking again cannot help (a certificate refused either way): a pass of such failures ends the call. */
    readonly lasting = false,
    readonly untrusted = false,
    /** Took the request and gave no answer by its deadline: its quorum is unknown. */
    readonly silent = false,
  ) {}
}

export class EtcdClient {
  readonly endpoints: readonly string[];
  readonly #http: HttpClient;
  readonly #user: EtcdUser | undefined;
  readonly #log: EtcdClientOptions['log'];
  readonly #clock: Clock;
  /** The member that answered last is asked first. */
  #preferred = 0;
  /** etcd's auth token per member: a token is valid only on the member that issued it (simple tokens). */
  readonly #tokens = new Map<string, string>();

  constructor(opts: EtcdClientOptions) {
    this.endpoints = opts.endpoints;
    this.#user = opts.user;
    this.#log = opts.log;
    this.#clock = opts.clock ?? systemClock;
    this.#http = createHttpClient({
      deadlineMs: MEMBER_DEADLINE_MS,
      compress: false,
      clock: this.#clock,
      ...(opts.trust && { trust: opts.trust }),
      ...(opts.log && { log: opts.log }),
    });
  }

  close(): void {
    this.#http.close();
  }

  /**
   * One call of the v3 API on the first member that answers it. A pass over all members that finds none answering
   * is tried again until CALL_PATIENCE_MS: a leader's loss fails every member's requests until the next election.
   * Exit 4 naming every member when none answers by then.
   */
  async call(path: string, body: JsonObject): Promise<JsonObject> {
    const giveUpAt = this.#clock.now() + CALL_PATIENCE_MS;
    for (let pass = 1; ; pass++) {
      const failures: MemberFailure[] = [];
      const start = this.#preferred;
      for (let i = 0; i < this.endpoints.length; i++) {
        const index = (start + i) % this.endpoints.length;
        const endpoint = this.endpoints[index]!;
        const answer = await this.#callMember(endpoint, path, body);
        if (answer instanceof MemberFailure) {
          this.#log?.verbose(`etcd ${endpoint}: ${answer.reason}; trying the next member`);
          failures.push(answer);
          continue;
        }
        this.#preferred = index;
        return answer.json;
      }
      // A silent member tells nothing of a quorum: beside one refused for good, the refusal is what to mend.
      if (failures.some((f) => f.lasting) && failures.every((f) => f.lasting || f.silent)) throw unreachable(failures);
      if (this.#clock.now() + PASS_PAUSE_MS * pass >= giveUpAt) throw unavailable(failures);
      await sleep(this.#clock, PASS_PAUSE_MS * pass);
    }
  }

  /**
   * One call on one member and no other, for `doctor`: its answer and the time its Date header gives, or why it
   * gave none. A refusal of who we are is thrown, as by `call`.
   */
  async ask(endpoint: string, path: string, body: JsonObject): Promise<MemberAnswer | { failure: string }> {
    const answer = await this.#callMember(endpoint, path, body);
    return answer instanceof MemberFailure ? { failure: answer.reason } : answer;
  }

  async #callMember(endpoint: string, path: string, body: JsonObject): Promise<MemberAnswer | MemberFailure> {
    const token = await this.#token(endpoint);
    if (token instanceof MemberFailure) return token;
    let reply = await this.#post(endpoint, path, body, token);
    if (!(reply instanceof MemberFailure) && reply.status === UNAUTHENTICATED && this.#user) {
      // A simple token expires after a while of idleness (--auth-token-ttl): sign in to etcd once more.
      this.#tokens.delete(endpoint);
      const again = await this.#token(endpoint);
      if (again instanceof MemberFailure) return again;
      reply = await this.#post(endpoint, path, body, again);
    }
    if (reply instanceof MemberFailure) return reply;
    if (reply.status === 0) return { json: reply.json, date: reply.date };
    return this.#failure(endpoint, reply.status, reply.message);
  }

  /** An error of the gateway: a member without a quorum is skipped; a refusal of who we are is the user's to mend. */
  #failure(endpoint: string, status: number, message: string): MemberFailure {
    if (status === UNAVAILABLE || status === DEADLINE_EXCEEDED) return new MemberFailure(endpoint, message);
    if (status === PERMISSION_DENIED) {
      const who = this.#user ? `the etcd user ${this.#user.name}` : 'a client without an etcd user';
      throw usageError(
        'ETCD_PERMISSION_DENIED',
        `etcd at ${endpoint} denied ${who} access under the key prefix (${message})`,
        'grant its role readwrite on IDCLI_ETCD_PREFIX (see `idcli doctor`), or set IDCLI_ETCD_USER',
      );
    }
    if (!this.#user && status === INVALID_ARGUMENT && /user name is empty/i.test(message)) throw authRequired(endpoint);
    if (status === UNAUTHENTICATED || (status === INVALID_ARGUMENT && /auth/i.test(message)))
      throw authFailed(endpoint);
    throw new IdcliError('ETCD_REFUSED', `etcd at ${endpoint} refused a request (${message})`, ExitCode.NETWORK, {
      hint: 'check the cluster with etcdctl, then try again',
    });
  }

  /** This member's auth token, undefined without a user (or when auth is off), or why the member did not answer. */
  async #token(endpoint: string): Promise<string | undefined | MemberFailure> {
    if (!this.#user) return undefined;
    const known = this.#tokens.get(endpoint);
    if (known !== undefined) return known;
    const { name, password } = this.#user;
    const reply = await this.#post(endpoint, '/v3/auth/authenticate', { name, password }, undefined);
    if (reply instanceof MemberFailure) return reply;
    if (reply.status === FAILED_PRECONDITION) {
      this.#log?.verbose(`etcd ${endpoint}: authentication is not enabled; going on without IDCLI_ETCD_USER`);
      this.#tokens.set(endpoint, '');
      return undefined;
    }
    if (reply.status === INVALID_ARGUMENT || reply.status === UNAUTHENTICATED) throw authFailed(endpoint);
    if (reply.status !== 0) return this.#failure(endpoint, reply.status, reply.message);
    const token = reply.json.token;
    if (typeof token !== 'string') return new MemberFailure(endpoint, 'no token in its answer to authenticate');
    this.#tokens.set(endpoint, token);
    return token;
  }

  /** One POST; `status` is the gRPC code of the gateway's error body (0 for success). */
  async #post(
    endpoint: string,
    path: string,
    body: JsonObject,
    token: string | undefined,
  ): Promise<{ status: number; message: string; json: JsonObject; date: number | undefined } | MemberFailure> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (token) headers.authorization = token;
    let res;
    try {
      res = await this.#http.request({
        method: 'POST',
        url: `${endpoint}${path}`,
        headers,
        body: JSON.stringify(body),
      });
    } catch (err) {
      // The HTTP layer's advice about IDCLI_HTTP_TIMEOUT does not apply: a member's deadline is the store's own.
      if (err instanceof NetworkError) {
        // Nor does its advice on trusting a CA for every connection: the members' CA is IDCLI_ETCD_CACERT's.
        const reason = err.message.replace(/ \(IDCLI_HTTP_TIMEOUT.*$/, '').replace(`; ${HOW_TO_TRUST}`, '');
        // A member past its deadline may answer once an election is over: only the patience ends the call then.
        const silent = err.code === 'EDEADLINE';
        return new MemberFailure(
          endpoint,
          reason,
          !err.retriable && !silent,
          err instanceof UntrustedCertificate,
          silent,
        );
      }
      throw err;
    }
    let json: unknown;
    try {
      json = JSON.parse(res.body.toString('utf8'));
    } catch {
      return new MemberFailure(endpoint, `HTTP ${res.status} without a JSON answer`);
    }
    if (!isJsonObject(json)) return new MemberFailure(endpoint, `HTTP ${res.status} without a JSON object`);
    // Streamed calls (lease keep-alive) wrap their one answer in `result`.
    const answer = isJsonObject(json.result) ? json.result : json;
    if (res.status >= 200 && res.status < 300 && json.error === undefined)
      return { status: 0, message: '', json: answer, date: dateOf(res.headers) };
    const code = typeof json.code === 'number' ? json.code : UNAVAILABLE;
    const message = typeof json.message === 'string' ? json.message : `HTTP ${res.status}`;
    return { status: code, message: message.slice(0, 200), json: answer, date: dateOf(res.headers) };
  }
}

function dateOf(headers: HttpHeaders): number | undefined {
  const date = headerValue(headers, 'date');
  const ms = date === undefined ? NaN : Date.parse(date);
  return Number.isNaN(ms) ? undefined : ms;
}

function unavailable(failures: readonly MemberFailure[]): IdcliError {
  const tried = failures.map((f) => `${f.endpoint} (${f.reason})`).join(', ');
  return new IdcliError('ETCD_UNAVAILABLE', `no etcd member answered with a quorum: ${tried}`, ExitCode.NETWORK, {
    hint: 'check the cluster (etcdctl endpoint health) and IDCLI_ETCD_ENDPOINTS; no refresh was sent',
  });
}

/** Every member refused in a way that asking again cannot mend: TLS, most often, which is the user's to set. */
function unreachable(failures: readonly MemberFailure[]): IdcliError {
  // Members set up alike fail alike: each reason is told once, after the members that gave it.
  const reasons = [...new Set(failures.map((f) => f.reason))];
  const tried = reasons
    .map(
      (r) =>
        `${failures
          .filter((f) => f.reason === r)
          .map((f) => f.endpoint)
          .join(', ')}: ${r}`,
    )
    .join('; ');
  const hint = failures.some((f) => f.untrusted)
    ? "set IDCLI_ETCD_CACERT to the CA that signed the members' certificates (etcdctl --cacert)"
    : 'members started with --client-cert-auth need IDCLI_ETCD_CERT and IDCLI_ETCD_KEY (etcdctl --cert, --key)';
  return new IdcliError('ETCD_TLS_FAILED', `no etcd member could be reached: ${tried}`, ExitCode.NETWORK, {
    hint: `${hint}; no refresh was sent`,
  });
}

/** etcd with authentication on, asked without a user. */
function authRequired(endpoint: string): IdcliError {
  return usageError(
    'ETCD_AUTH_FAILED',
    `etcd at ${endpoint} requires authentication and IDCLI_ETCD_USER is not set`,
    'set IDCLI_ETCD_USER to name:password of an etcd user (as etcdctl --user)',
  );
}

function authFailed(endpoint: string): IdcliError {
  return usageError(
    'ETCD_AUTH_FAILED',
    `etcd at ${endpoint} refused the user and password of IDCLI_ETCD_USER`,
    'set IDCLI_ETCD_USER to name:password of an etcd user (as etcdctl --user)',
  );
}

/** Keys and values travel base64-encoded in the gateway's JSON. */
export const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

export function kvsOf(range: JsonObject | undefined): EtcdKv[] {
  const kvs = range?.kvs;
  if (!Array.isArray(kvs)) return [];
  return kvs.filter(isJsonObject).map((kv) => ({
    key: Buffer.from(scalarText(kv.key, ''), 'base64').toString('utf8'),
    value: Buffer.from(scalarText(kv.value, ''), 'base64').toString('utf8'),
    modRevision: Number(kv.mod_revision ?? 0),
    lease: scalarText(kv.lease, '0'),
  }));
}

/** A field of the gateway's JSON as text: the gateway sends 64-bit numbers as strings, a smaller one may be a number. */
export function scalarText(value: unknown, absent: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return absent;
}

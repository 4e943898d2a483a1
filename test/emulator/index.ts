// The contract emulator: a strict, in-memory implementation of service-contract.md on a real socket.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { createSecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { Bombs } from './coding-faults.js';
import { machineClock } from './clock.js';
import { Collections } from './collections.js';
import { EncodedCache } from './compression.js';
import type { Core } from './core.js';
import { generateEvents, generateUsers } from './data.js';
import { Directory } from './directory.js';
import { FaultQueue } from './faults.js';
import { Grants } from './grants.js';
import { Link } from './link.js';
import { type Relay, startRelay } from './relay.js';
import { generateRecords } from './records.js';
import { Resources } from './resources.js';
import { isCodeChallenge } from './pkce.js';
import { createHandler } from './server.js';
import { verifyJwt } from './tokens.js';
import type { ConnectionCounts, Emulator, EmulatorOptions, User } from './types.js';
import { WireMeter } from './wire.js';

export { SSO_COOKIE } from './authorize.js';
export { generateEvents, generateUsers } from './data.js';
export { MIN_COMPRESSED_BODY } from './compression.js';
export { generateRecords, growingItems } from './records.js';
export { CODE_TTL_MS } from './grants.js';
export { ECHO_PATH, SLOW_PATH, STATUS_PREFIX, UNAVAILABLE_PATH, UPLOAD_PATH } from './resources.js';
export { isCodeChallenge, isCodeVerifier, s256 } from './pkce.js';
export type * from './types.js';

export const DEFAULT_USER: Readonly<User> = {
  email: 'alice@example.com',
  password: 'correct-horse-battery',
  name: 'Alice Example',
};
export const DEFAULT_CLIENT_NAME = 'idcli-test';
export const DEFAULT_CALLBACK = 'http://127.0.0.1:8765/callback';

function urlHost(host: string): string {
  // An unspecified address is not somewhere a client can connect to; loopback is.
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

export async function startEmulator(opts: EmulatorOptions = {}): Promise<Emulator> {
  let clock = opts.now ?? Date.now;
  const issued = new Set<string>();
  const waits = opts.clock ?? machineClock;
  const timers = new Set<{ clear(): void }>();
  const jwtSecret = randomBytes(32);
  const directory = new Directory();
  const collections = new Collections();
  const faults = new FaultQueue(() => waits.now());
  const wire = new WireMeter();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = waits.setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });
  const core: Core = {
    baseUrl: '',
    now: () => clock(),
    sendIss: opts.sendIss ?? false,
    latencyMs: opts.latencyMs ?? 0,
    loadLatency: opts.loadLatency,
    pageLimit:
      opts.maxPageSize === undefined ? undefined : { max: opts.maxPageSize, over: opts.overMaxPageSize ?? 'refuse' },
    rateLimit:
      opts.maxInFlight === undefined
        ? undefined
        : { maxInFlight: opts.maxInFlight, retryAfter: opts.rateLimitRetryAfter ?? '1' },
    // A link charged per round trip is the relay's to carry; the server then answers at once, at socket speed.
    link: new Link(opts.link?.roundTrip ? {} : (opts.link ?? {}), waits, sleep),
    encoded: new EncodedCache(),
    bombs: new Bombs(),
    directory,
    grants: new Grants({
      issuer: () => core.baseUrl,
      now: () => clock(),
      accessTokenTtl: opts.accessTokenTtl ?? 3600,
      issueRefreshTokens: opts.issueRefreshTokens ?? true,
      refreshTokenOnRefresh: opts.refreshTokenOnRefresh ?? true,
      jwtSecret,
      remember: (s) => issued.add(s),
    }),
    collections,
    resources: new Resources(),
    transactions: new Map(),
    requests: [],
    tokenEvents: [],
    errors: [],
    remember: (s) => issued.add(s),
    sleep,
    onRequest: undefined,
  };

  const client = directory.registerClient({
    name: DEFAULT_CLIENT_NAME,
    callbackUrl: opts.callbackUrl ?? DEFAULT_CALLBACK,
    loopbackAnyPort: opts.loopbackAnyPort ?? false,
  });
  directory.addUser(DEFAULT_USER);
  collections.set('/v1/users', { type: 'offset', items: generateUsers(opts.userItems ?? 250) });
  collections.set('/v1/events', { type: 'cursor', items: generateEvents(230) });
  const records = generateRecords(opts.recordItems ?? 1000);
  collections.set('/v1/records', { type: 'offset', items: records });
  collections.set('/v1/records-cursor', { type: 'cursor', items: records });

  const handler = createHandler(core, faults);
  const server = opts.tls
    ? // HTTP/2 where the client asks for it through ALPN, HTTP/1.1 otherwise, as services behind a CDN answer.
      createSecureServer({ key: opts.tls.key, cert: opts.tls.cert, allowHTTP1: true }, handler as never)
    : createServer(handler);
  const counts: ConnectionCounts = { tcp: 0, tls: 0, resumed: 0, http2: 0 };
  server.on('connection', (socket) => {
    counts.tcp++;
    wire.track(socket);
  });
  server.on('secureConnection', (socket) => {
    counts.tls++;
    if (socket.isSessionReused()) counts.resumed++;
    if (socket.alpnProtocol === 'h2') counts.http2++;
  });
  // A client that refuses the certificate hangs up mid-handshake: its outcome, not the server's fault.
  server.on('tlsClientError', () => {});
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Behind a relay, the port asked for is the relay's.
    server.listen(opts.link?.roundTrip ? 0 : (opts.port ?? 0), host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const serverPort = (server.address() as AddressInfo).port;
  let relay: Relay | undefined;
  if (opts.link?.roundTrip) {
    const { latencyMs = 0, bandwidthMbps } = opts.link;
    relay = await startRelay({
      target: serverPort,
      roundTripMs: latencyMs,
      host,
      clock: waits,
      ...(opts.port === undefined ? {} : { port: opts.port }),
      ...(bandwidthMbps === undefined ? {} : { bandwidthMbps }),
    });
  }
  core.baseUrl = `${opts.tls ? 'https' : 'http'}://${urlHost(host)}:${relay?.port ?? serverPort}`;

  const lookupClient = (id: string | undefined) => {
    const c = directory.client(id ?? client.id);
    if (!c) throw new Error('unknown client');
    return c;
  };
  const lookupUser = (email: string | undefined) => {
    const u = directory.user(email ?? DEFAULT_USER.email);
    if (!u) throw new Error('unknown user');
    return u;
  };

  return {
    baseUrl: core.baseUrl,
    client,
    user: { ...DEFAULT_USER },
    registerClient: (c) => directory.registerClient(c),
    addUser: (u) => {
      directory.addUser(u);
    },
    setCollection: (path, c) => collections.set(path, c),
    setResource: (path, body) => core.resources.set(path, body),
    resource: (path) => core.resources.get(path),
    inject: (f) => faults.inject(f),
    clearFaults: () => faults.clear(),
    get requests() {
      return core.requests;
    },
    set requests(v) {
      core.requests = v;
    },
    get tokenEvents() {
      return core.tokenEvents;
    },
    set tokenEvents(v) {
      core.tokenEvents = v;
    },
    get errors() {
      return core.errors;
    },
    wireBytes: () => wire.bytes(),
    linkBytes: () => relay?.downBytes ?? core.link.charged,
    connections: () => ({ ...counts }),
    secrets: () => [...issued],
    expireAccessTokens: () => core.grants.expireAccessTokens(),
    onRequest: (hook) => {
      core.onRequest = hook;
    },
    revokeAll: () => core.grants.revokeAll(),
    setNow: (fn) => {
      clock = fn;
    },
    createAuthorizationCode: (o) => {
      const c = lookupClient(o.clientId);
      if (!isCodeChallenge(o.challenge)) throw new Error('challenge must be an S256 challenge');
      return core.grants.issueCode({
        clientId: c.id,
        redirectUri: o.redirectUri ?? c.callbackUrl,
        challenge: o.challenge,
        user: lookupUser(o.email),
        scope: o.scope ?? `openid ${c.name}`,
        nonce: undefined,
        authTime: clock(),
      });
    },
    mintTokens: (o = {}) => {
      const c = lookupClient(o.clientId);
      if (o.nextChallenge !== undefined && !isCodeChallenge(o.nextChallenge)) {
        throw new Error('nextChallenge must be an S256 challenge');
      }
      return core.grants.mint({
        clientId: c.id,
        user: lookupUser(o.email),
        scope: o.scope ?? `openid ${c.name}`,
        nextChallenge: o.nextChallenge ?? null,
      });
    },
    verifyIdToken: (jwt) => verifyJwt(jwt, jwtSecret),
    close: async () => {
      for (const timer of timers) timer.clear();
      timers.clear();
      await relay?.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive connections and HTTP/2 sessions alike: every socket the server has open.
        wire.destroyAll();
      });
    },
  };
}

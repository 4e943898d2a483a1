// Public types of the contract emulator. Other test suites code against these names, so they only grow.

export interface EmulatorOptions {
  host?: string; // default '127.0.0.1'
  port?: number; // default 0
  now?: () => number; // injectable clock in ms (default Date.now); codes are valid 10 min against it
  accessTokenTtl?: number; // expires_in seconds, default 3600
  issueRefreshTokens?: boolean; // default true (refresh_token is optional in the contract)
  /** When false, refresh responses carry no new refresh token (the spent one stays spent). Default true. */
  refreshTokenOnRefresh?: boolean;
  sendIss?: boolean; // add RFC 9207 `iss` to the authorize redirect, default false
  latencyMs?: number; // added to every collection response (benchmarks), default 0
  /** The network to the clients: one shared bandwidth for all responses, and a latency before each. */
  link?: LinkOptions;
  /** Callback of the default client, default 'http://127.0.0.1:8765/callback'. */
  callbackUrl?: string;
  /** Whether the default client accepts any loopback port (RFC 8252 §7.3). Default false: byte-for-byte. */
  loopbackAnyPort?: boolean;
  /** Number of generated items in the default /v1/users collection, default 250. */
  userItems?: number;
  /**
   * Number of realistic records (generateRecords) in the default /v1/records collection (offset-based) and in
   * /v1/records-cursor (the same records, cursor-based), default 1000.
   */
  recordItems?: number;
  /** The largest pageSize a collection serves; default none (the contract sets no maximum). */
  maxPageSize?: number;
  /**
   * What a larger pageSize gets: 'refuse' answers 400 (default), 'unprocessable' 422, 'cap' silently serves
   * maxPageSize items.
   */
  overMaxPageSize?: 'refuse' | 'unprocessable' | 'cap';
  /**
   * A rate limit: a collection request arriving while this many collection requests are already in flight is
   * answered 429 with `Retry-After: rateLimitRetryAfter` (seconds, default '1'). Default: no limit.
   */
  maxInFlight?: number;
  rateLimitRetryAfter?: string;
  /** Serve HTTPS with this key and certificate (see pki.ts) instead of plain HTTP; HTTP/2 to a client that asks. */
  tls?: { key: Buffer; cert: Buffer };
  /**
   * A server that slows with load: a collection request arriving while more than `above` are in flight (itself
   * included) waits `msPerSquare`·n² ms instead of latencyMs, n being that count. Default: latency is latencyMs.
   */
  loadLatency?: { above: number; msPerSquare: number };
  /**
   * The clock every wait of the emulator runs on: the link's latency and byte budget, the relay's round trips,
   * latency faults, forMs storms, /v1/slow and latencyMs. Default the machine's (performance.now() and Node's
   * timers). A test's clock (virtual-clock.ts, test/support/clock.ts) makes those waits counted instead of waited.
   * Codes and tokens keep `now`.
   */
  clock?: EmulatorClock;
}

/** What the emulator needs of a clock: the Clock of src/clock.ts has this shape, and so does a test's FakeClock. */
export interface EmulatorClock {
  /** Milliseconds; only differences are read. */
  now(): number;
  /** Calls `fn` once `ms` of this clock have passed, unless cleared first. */
  setTimeout(fn: () => void, ms: number): { clear(): void };
}

export interface LinkOptions {
  /** Bandwidth shared by every response, head and body as sent, in Mbit/s (10^6 bit/s). Default: unlimited. */
  bandwidthMbps?: number;
  /** Milliseconds paid before each response is sent, default 0; with roundTrip, the round trip. */
  latencyMs?: number;
  /**
   * Charge the latency per round trip rather than per response: a TCP relay in front of the server (relay.ts) holds
   * each direction's bytes for half of it and paces the server's through the bandwidth, so connecting, TLS
   * handshakes and each request pay it as on a real network. Default false.
   */
  roundTrip?: boolean;
}

export interface ConnectionCounts {
  /** TCP connections accepted. */
  tcp: number;
  /** TLS handshakes completed (resumed ones included); 0 over plain HTTP. */
  tls: number;
  /** Of those, the ones that resumed an earlier session. */
  resumed: number;
  /** Of those, the ones that chose HTTP/2 through ALPN (the emulator offers h2 and http/1.1 over TLS). */
  http2: number;
}

export interface RegisteredClient {
  name: string;
  id: string;
  secret: string;
  callbackUrl: string;
  loopbackAnyPort: boolean;
}

export interface User {
  email: string;
  password: string;
  name: string;
}

export interface LoggedRequest {
  method: string;
  path: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  bearer: string | null;
  form?: Record<string, string>;
  /** The body as received, for requests to the resource API. */
  body?: Buffer;
  /** Bytes of the body read so far, for the upload endpoint, which keeps none of them. */
  received?: number;
  status?: number;
  /** Collection requests only: how many were in flight when this one arrived, itself included. */
  inFlight?: number;
  /**
   * Set once the emulator is done with the request: answered, or given up because its client went away. Tests
   * wait for it where a request's client was killed, since such a request never gets a status on the wire.
   */
  handled?: true;
  /** By the emulator's (injectable) clock. */
  time: number;
  /** Real wall-clock time (Date.now()), useful to measure client back-off when the clock is faked. */
  wallTime: number;
}

export interface TokenEvent {
  grant: string;
  ok: boolean;
  error?: string;
  reuse?: boolean;
  time: number;
}

export interface CollectionSpec {
  type: 'offset' | 'cursor';
  items: string[]; // each item as RAW JSON TEXT (big integers, escapes, odd key order survive)
  totalKnown?: boolean; // cursor only: include totalItems (default false); offset always includes it
  lastLink?: boolean; // cursor: include links.last (default false); offset: always
  linkStyle?: 'object' | 'string' | 'relative'; // {href:abs} (default) | "abs" | {href:"/v1/..?.."}
  pretty?: boolean; // pretty-print the envelope; the items' own text is kept as given
  public?: boolean; // no bearer needed (default false)
  /** Offset only: the order of the paging parameters in links, `?pageIndex=…&pageSize=…` (default) or the other. */
  querySpelling?: 'pageIndex-first' | 'pageSize-first';
  /**
   * Offset only, a server that ignores the pageSize asked for: each page holds `times` as many items (rounded, at
   * least one) and pages are numbered by that count; links spell the pageSize asked for, or the count served.
   */
  serves?: { times: number; links: 'asked' | 'served' };
}

export type Fault =
  | { kind: 'status'; status: number; retryAfter?: string; body?: string; headers?: Record<string, string> }
  | { kind: 'drop' }
  | { kind: 'latency'; ms: number }
  /**
   * The request waits until `until` settles, then is answered as usual: a request held for as long as the test
   * needs, ended by an event rather than a duration.
   */
  | { kind: 'hold'; until: Promise<unknown> }
  | { kind: 'body'; status?: number; contentType?: string; body: string; headers?: Record<string, string> }
  /** Collection paths only: replaces links.next of the page with this value (undefined removes it). */
  | { kind: 'next'; href: unknown }
  | { kind: 'drop-mid-body' }
  /**
   * The endpoint's reply labelled `Content-Encoding: <coding>` whatever the request accepted: gzip and br are
   * really encoded, any other coding (e.g. x-snappy) leaves the bytes as they are.
   */
  | { kind: 'encoding'; coding: string }
  /** The endpoint's status and headers with a gzip body of about 1 MB that inflates to 1 GiB of zeros (or to `inflatedBytes`). */
  | { kind: 'gzip-bomb'; inflatedBytes?: number }
  /** The endpoint's reply as a gzip body whose first half decodes and whose rest is damaged. */
  | { kind: 'corrupt-gzip' }
  /**
   * The endpoint answers as usual (a grant is really spent), then these members replace those of its JSON reply:
   * a token response with the tokens the emulator issued and, say, an `expires_in` of 1e300.
   */
  | { kind: 'patch'; fields: Record<string, unknown> };

export interface FaultSpec {
  /** Pathname to match ('/v1/users', '/oauth/token', ...); '*' matches every path. */
  path: string;
  /** Applies from the nth matching request counted from injection (1-based), default 1 = the next one. */
  nth?: number;
  /** How many matching requests get the fault (default 1; Infinity allowed). */
  times?: number;
  /**
   * Instead of times: every matching request gets the fault until this many ms (of EmulatorOptions.clock) have
   * passed since the first one did, a storm that ends at a known time whatever the client does meanwhile.
   */
  forMs?: number;
  /**
   * Query parameters the request must carry, with these values (e.g. `{ pageIndex: '3' }`): a fault for one page,
   * whatever order the pages of a parallel walk arrive in. nth then counts only the requests that match.
   */
  params?: Record<string, string>;
  fault: Fault;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  id_token: string;
  scope: string;
}

export interface MintOptions {
  email?: string; // default: the default user
  clientId?: string; // default: the default client
  scope?: string; // default: 'openid <client name>'
  /** The challenge the first refresh must prove; without it refresh is refused, as after a code exchange without one. */
  nextChallenge?: string;
}

export interface CodeOptions {
  challenge: string;
  clientId?: string;
  redirectUri?: string; // default: the client's callback
  scope?: string;
  email?: string;
}

export interface Emulator {
  baseUrl: string; // e.g. http://127.0.0.1:41234 (no trailing slash)
  client: RegisteredClient; // default client 'idcli-test'
  user: User; // default user alice@example.com / correct-horse-battery / 'Alice Example'
  registerClient(c: { name: string; callbackUrl: string; loopbackAnyPort?: boolean; id?: string }): RegisteredClient;
  addUser(u: User): void;
  setCollection(path: string, c: CollectionSpec): void; // path like '/v1/users'
  /** Stores an item of the resource API, its bytes kept exactly (path like '/v1/users/42'). */
  setResource(path: string, body: string | Buffer): void;
  /** The item's current bytes, or undefined when there is none (never stored, or deleted). */
  resource(path: string): Buffer | undefined;
  inject(f: FaultSpec): void; // queue a fault
  clearFaults(): void;
  requests: LoggedRequest[]; // every request, in order
  tokenEvents: TokenEvent[]; // every /oauth/token call with its outcome
  /** Exceptions the emulator hit while answering (each answered 500); empty unless the emulator has a bug. */
  readonly errors: unknown[];
  /** Bytes written to the emulator's sockets so far: heads and bodies as sent, compressed when compressed. */
  wireBytes(): number;
  /** Bytes charged to the link's byte budget so far; 0 without a bandwidth (EmulatorOptions.link). */
  linkBytes(): number;
  /** Connections and TLS handshakes the server has seen so far. */
  connections(): ConnectionCounts;
  secrets(): string[]; // every code, token issued and every code_verifier received (for leak tests)
  expireAccessTokens(): void; // all issued access tokens now answer 401
  /**
   * Runs `hook` synchronously as each request arrives, once logged and before anything checks or answers it
   * (undefined removes it). Lets a test change the emulator's state at an exact point of a client's sequence.
   */
  onRequest(hook: ((req: LoggedRequest) => void) | undefined): void;
  revokeAll(): void; // every code, access and refresh token issued so far is revoked (SSO sessions survive)
  setNow(fn: () => number): void;
  /** Issue a code as if the user had signed in, without the browser (for token-client tests). */
  createAuthorizationCode(o: CodeOptions): string;
  /** Issue tokens as if a code had been exchanged (for list/token tests that need a signed-in state). */
  mintTokens(o?: MintOptions): TokenResponse;
  /** Verify an id_token signed by this emulator; its claims, or null when the signature or shape is wrong. */
  verifyIdToken(jwt: string): Record<string, unknown> | null;
  close(): Promise<void>;
}

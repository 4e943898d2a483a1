// The state every handler shares, and the per-request view handlers receive.
import type { IncomingMessage } from 'node:http';
import type { Bombs } from './coding-faults.js';
import type { Collections } from './collections.js';
import type { EncodedCache } from './compression.js';
import type { Directory } from './directory.js';
import type { Grants } from './grants.js';
import type { Locale } from './html.js';
import type { Link } from './link.js';
import type { Resources } from './resources.js';
import type { LoggedRequest, RegisteredClient, TokenEvent } from './types.js';

/** An authorization request waiting for the user to sign in (or up) in the browser. */
export interface Transaction {
  client: RegisteredClient;
  redirectUri: string;
  state: string | undefined;
  challenge: string;
  scope: string;
  nonce: string | undefined;
  locale: Locale;
  loginHint: string;
  createdAt: number;
}

export interface Core {
  baseUrl: string;
  now(): number;
  sendIss: boolean;
  latencyMs: number;
  /** See EmulatorOptions.loadLatency. */
  loadLatency: { above: number; msPerSquare: number } | undefined;
  /** See EmulatorOptions.maxPageSize and overMaxPageSize. */
  pageLimit: { max: number; over: 'refuse' | 'unprocessable' | 'cap' } | undefined;
  /** See EmulatorOptions.maxInFlight. */
  rateLimit: { maxInFlight: number; retryAfter: string } | undefined;
  link: Link;
  /** Encoded collection pages, reused across requests for the same page. */
  encoded: EncodedCache;
  bombs: Bombs;
  directory: Directory;
  grants: Grants;
  collections: Collections;
  resources: Resources;
  transactions: Map<string, Transaction>;
  requests: LoggedRequest[];
  tokenEvents: TokenEvent[];
  /** Unexpected exceptions inside handlers (answered with 500). */
  errors: unknown[];
  remember(secret: string): void;
  sleep(ms: number): Promise<void>;
  /** See Emulator.onRequest. */
  onRequest: ((req: LoggedRequest) => void) | undefined;
}

export interface Exchange {
  req: IncomingMessage;
  pathname: string;
  /** The raw query string, without '?'. */
  query: string;
  log: LoggedRequest;
  /** Set by a `next` fault: the value that replaces links.next on this page (undefined removes it). */
  nextOverride?: { href: unknown };
}

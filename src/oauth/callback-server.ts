/**
 * The one-shot loopback listener of a native-app sign-in (RFC 8252 §7.3): GET on the callback path, Host checked
 * (DNS rebinding), no state no answer, and a 303 to a page without the code, out of the history (§8.10).
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExitCode, IdcliError, interrupted, usageError } from '../errors.js';
import type { Logger } from '../log.js';
import { bindAddresses, type LoopbackRedirect, parseRedirectUri } from '../redirect-uri.js';
import { type CallbackExpectation, type CallbackOutcome, validateCallback } from './callback.js';
import { errCode } from '../shape.js';
import { type Clock, systemClock, type Timer } from '../clock.js';

export type CallbackResult = Exclude<CallbackOutcome, { kind: 'ignore' }>;

export type PasteVerdict = { taken: true } | { taken: false; reason: string };

export interface DonePage {
  ok: boolean;
  message: string;
}

export interface CallbackServer {
  /** The redirect URI to send: the configured one, with the port actually bound when it said 0. */
  readonly redirectUri: string;
  /** The first response with our state, or a timeout (exit 3, naming `totalMs`) or the abort signal (exit 130). */
  wait(timeoutMs: number, signal: AbortSignal, totalMs?: number): Promise<CallbackResult>;
  /** Wait for another response, from the browser or pasted, after the one taken was a pasted code that was refused. */
  reopen(): void;
  /** Take an address pasted by the user as if the browser had delivered it; a refusal never repeats the paste. */
  offer(address: string): PasteVerdict;
  /** Show `page` to the browser that delivered the callback, then stop listening. */
  close(page?: DonePage): Promise<void>;
}

export interface CallbackServerOptions {
  redirectUri: string;
  expectation: CallbackExpectation;
  log: Logger;
  /** The clock of wait()'s timeout and close()'s grace; the machine's by default. */
  clock?: Clock;
  /** How long after the 303 close() waits for the browser to follow it before shutting anyway. */
  graceMs?: number;
}

interface ParsedRedirect extends LoopbackRedirect {
  bindAddresses: string[];
  path: string;
}

export function parseLoopbackRedirect(uri: string): ParsedRedirect {
  const parsed = parseRedirectUri(uri);
  if (!parsed) throw usageError('SETTING_INVALID', `redirect-uri is not a loopback http URI: ${uri}`);
  const path = new URL(`http://x${parsed.rest || '/'}`).pathname;
  return { ...parsed, bindAddresses: bindAddresses(parsed.host), path };
}

export async function startCallbackServer(opts: CallbackServerOptions): Promise<CallbackServer> {
  const listener = new Listener(opts);
  await listener.listen();
  return listener;
}

class Listener implements CallbackServer {
  private readonly target: ParsedRedirect;
  private readonly donePath: string;
  private port: number;
  private servers: Server[] = [];
  private result: CallbackResult | undefined;
  private finalPage: DonePage | undefined;
  private readonly pendingDone: ServerResponse[] = [];
  /** When the browser was sent to the done page (the clock's monotonic()), if it was. */
  private redirectedAt: number | undefined;
  private readonly clock: Clock;
  private settle: (r: CallbackResult) => void = () => {};
  private delivered = new Promise<CallbackResult>((resolve) => (this.settle = resolve));
  private doneServed: () => void = () => {};
  private readonly doneRequested = new Promise<void>((resolve) => (this.doneServed = resolve));

  constructor(private readonly opts: CallbackServerOptions) {
    this.clock = opts.clock ?? systemClock;
    this.target = parseLoopbackRedirect(opts.redirectUri);
    this.port = this.target.port;
    this.donePath = this.target.path === '/done' ? '/done-page' : '/done';
  }

  get redirectUri(): string {
    return `http://${this.target.host}:${this.port}${this.target.rest}`;
  }

  async listen(): Promise<void> {
    const bound = await bindAll(this.target, (req, res) => this.route(req, res));
    this.servers = bound.servers;
    this.port = bound.port;
    this.opts.log.verbose(`loopback: listening on ${this.target.bindAddresses.join(' and ')} port ${this.port}`);
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://loopback.invalid');
    } catch {
      return page(res, 400, 'Bad request.');
    }
    // Paths only: the query holds the code.
    this.opts.log.verbose(`loopback: ${req.method} ${url.pathname}`);
    if (!this.isOurHost(req.headers.host ?? '')) return page(res, 400, 'Unexpected Host header.');
    if (url.pathname === this.target.path) return this.takeCallback(req, res, url);
    if (url.pathname === this.donePath && this.result !== undefined) return this.serveDone(req, res);
    return page(res, 404, 'Not found.');
  }

  /** `host:port` as the browser sends it in Host, or as a pasted address names it: the redirect URI's. */
  private isOurHost(hostAndPort: string): boolean {
    return hostAndPort.toLowerCase() === `${this.target.host}:${this.port}`.toLowerCase();
  }

  /** Take the first response with our state and send the browser on to the done page; refuse every other. */
  private takeCallback(req: IncomingMessage, res: ServerResponse, url: URL): void {
    if (req.method !== 'GET') return page(res, 405, 'Method not allowed.', { Allow: 'GET' });
    if (this.result !== undefined)
      return page(res, 400, 'This sign-in has already been handled. You can close this tab.');
    if (this.accept(url.searchParams, 'callback').kind === 'ignore')
      return page(
        res,
        400,
        'This sign-in response does not belong to the running idcli login. Return to the terminal.',
      );
    this.redirectedAt = this.clock.monotonic();
    res.writeHead(303, { ...SECURITY_HEADERS, Location: this.donePath, 'Content-Length': '0' });
    res.end();
  }

  offer(address: string): PasteVerdict {
    let url: URL;
    try {
      url = new URL(address.trim());
    } catch {
      return refused("that is not an address: copy the whole address from the browser's address bar");
    }
    // A pasted address's own host and port stand for the Host header (80 written out, as the URL parser drops it).
    const ours =
      url.protocol === 'http:' &&
      this.isOurHost(`${url.hostname}:${url.port || '80'}`) &&
      url.pathname === this.target.path;
    if (!ours) return refused(`that is not this sign-in's address: it starts with ${this.redirectUri}`);
    if (this.result !== undefined) return refused('this sign-in has already been handled');
    const outcome = this.accept(url.searchParams, 'paste');
    if (outcome.kind === 'ignore' || outcome.kind === 'invalid') return refused(this.pasteRefusal(outcome));
    return { taken: true };
  }

  /** Why a pasted address was refused, in words that say what to copy again. */
  private pasteRefusal(outcome: Extract<CallbackOutcome, { kind: 'ignore' | 'invalid' }>): string {
    const copyAll = 'copy all of it, with everything after "?"';
    if (outcome.kind === 'invalid' && outcome.issuerMismatch)
      return `that address names another issuer (iss) than ${this.opts.expectation.issuer}: ${copyAll}; if it was whole, check the issuer setting (IDCLI_ISSUER)`;
    if (outcome.kind === 'invalid') return `that address carries no code: ${copyAll}`;
    if (outcome.reason === 'state does not match')
      return `that address is from another sign-in, or cut off in its state (its state is not this sign-in's): ${copyAll}`;
    return `that address is not a whole sign-in response (${outcome.reason}): ${copyAll}`;
  }

  /** The first response with our state settles wait(); a pasted unusable one was likely mangled, so it is refused. */
  private accept(params: URLSearchParams, via: 'callback' | 'paste'): CallbackOutcome {
    const outcome = validateCallback(params, this.opts.expectation);
    if (outcome.kind === 'ignore' || (via === 'paste' && outcome.kind === 'invalid')) {
      const what = via === 'paste' ? 'paste: refused an address' : 'loopback: refused a callback';
      this.opts.log.verbose(`${what} (${outcome.reason}); still waiting`);
      return outcome;
    }
    this.result = outcome;
    this.settle(outcome);
    return outcome;
  }

  /** Show the outcome once the login knows it; until then hold the request open. */
  private serveDone(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'GET') return page(res, 405, 'Method not allowed.', { Allow: 'GET' });
    this.doneServed();
    if (this.finalPage) return page(res, this.finalPage.ok ? 200 : 400, this.finalPage.message);
    this.pendingDone.push(res);
  }

  reopen(): void {
    this.result = undefined;
    this.delivered = new Promise<CallbackResult>((resolve) => (this.settle = resolve));
  }

  async wait(timeoutMs: number, signal: AbortSignal, totalMs = timeoutMs): Promise<CallbackResult> {
    const message = `sign-in timed out after ${Math.round(totalMs / 1000)} s`;
    const timedOut = () =>
      new IdcliError('SIGN_IN_TIMED_OUT', message, ExitCode.AUTH, { hint: 'run `idcli login` again' });
    let timer: Timer | undefined;
    let onAbort: (() => void) | undefined;
    const stop = new Promise<never>((_, reject) => {
      timer = this.clock.setTimeout(() => reject(timedOut()), timeoutMs);
      onAbort = () => reject(interrupted());
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([this.delivered, stop]);
    } finally {
      timer?.clear();
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  async close(finished?: DonePage): Promise<void> {
    this.finalPage = finished ?? { ok: false, message: 'The sign-in did not complete. Return to the terminal.' };
    for (const res of this.pendingDone.splice(0)) page(res, this.finalPage.ok ? 200 : 400, this.finalPage.message);
    if (this.redirectedAt !== undefined) {
      // Wait a little for the browser to follow the 303, so it shows the outcome instead of a connection error.
      const left = this.redirectedAt + (this.opts.graceMs ?? 1000) - this.clock.monotonic();
      let grace: Timer | undefined;
      if (left > 0)
        await Promise.race([this.doneRequested, new Promise<void>((r) => (grace = this.clock.setTimeout(r, left)))]);
      grace?.clear();
    }
    const closed = this.servers.map((s) => new Promise((resolve) => s.close(resolve)));
    for (const s of this.servers) s.closeAllConnections();
    await Promise.all(closed);
  }
}

/** A browser sends its callback request at once; one that trickles in for longer is not a browser's. */
const SLOW_REQUEST_MS = 10_000;

async function bindAll(target: ParsedRedirect, handler: RequestListener): Promise<{ servers: Server[]; port: number }> {
  // With port 0 the first address picks the port for all; if another has it taken, try again with another port.
  const attempts = target.port === 0 && target.bindAddresses.length > 1 ? 10 : 1;
  for (let attempt = 1; ; attempt++) {
    let port = target.port;
    let failedAt = target.bindAddresses[0]!;
    const bound: Server[] = [];
    try {
      for (const address of target.bindAddresses) {
        failedAt = address;
        const s = createServer(handler);
        s.headersTimeout = SLOW_REQUEST_MS;
        s.requestTimeout = SLOW_REQUEST_MS;
        const actual = await listen(s, address, port, address !== target.bindAddresses[0]);
        if (actual === undefined) continue; // this address family does not exist on the machine
        bound.push(s);
        port = actual;
      }
      const none = `cannot listen on ${target.host}: no loopback address is available`;
      if (bound.length === 0) throw usageError('CALLBACK_NO_LOOPBACK', none);
      return { servers: bound, port };
    } catch (err) {
      await Promise.all(bound.map((s) => new Promise((r) => s.close(r))));
      const code = errCode(err);
      if (code === 'EADDRINUSE' && attempt < attempts) continue;
      if (err instanceof IdcliError) throw err;
      const where = failedAt.includes(':') ? `[${failedAt}]:${port}` : `${failedAt}:${port}`;
      if (code === 'EADDRINUSE')
        throw usageError(
          'CALLBACK_PORT_IN_USE',
          `port ${port} is already in use on ${failedAt}, so the sign-in callback cannot be received`,
          `stop the program using port ${port}, or register and configure another redirect-uri port`,
        );
      if (code === 'EACCES') {
        const message = `not allowed to listen on port ${port} for the sign-in callback`;
        throw usageError('CALLBACK_PORT_FORBIDDEN', message, 'use a redirect-uri port above 1023');
      }
      const message = `cannot listen on ${where} for the sign-in callback: ${code ?? 'unknown error'}`;
      throw usageError('CALLBACK_LISTEN_FAILED', message);
    }
  }
}

/** Resolves with the bound port, or undefined when an optional second address family is missing. */
function listen(server: Server, host: string, port: number, optional: boolean): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      if (optional && (err.code === 'EADDRNOTAVAIL' || err.code === 'EAFNOSUPPORT')) resolve(undefined);
      else reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port); // a listening TCP server's address
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ host, port, ipv6Only: host.includes(':') });
  });
}

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
  Connection: 'close',
};

function refused(reason: string): PasteVerdict {
  return { taken: false, reason };
}

function page(res: ServerResponse, status: number, message: string, extra: Record<string, string> = {}): void {
  const title = status === 200 ? 'Signed in' : 'idcli sign-in';
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em;color:#222}</style></head>
<body><h1>${title}</h1><p>${escapeHtml(message)}</p></body></html>\n`;
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    ...extra,
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

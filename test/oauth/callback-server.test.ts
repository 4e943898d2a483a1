import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { IdcliError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { type CallbackServer, parseLoopbackRedirect, startCallbackServer } from '../../src/oauth/callback-server.js';
import { FakeClock } from '../support/clock.js';
import { until } from '../support/until.js';

/** What the servers log with --verbose: the requests they receive, as events a test can wait for. */
const logged: string[] = [];
const log = createLogger({ write: (line: string) => logged.push(line) > 0 }, { verbose: true, quiet: false });
const expectation = { state: 'expected-state', issuer: 'http://127.0.0.1:1' };
const open: CallbackServer[] = [];
const blockers: Server[] = [];

afterEach(async () => {
  logged.length = 0;
  await Promise.all(open.splice(0).map((s) => s.close()));
  await Promise.all(blockers.splice(0).map((b) => new Promise((r) => b.close(r))));
});

async function start(redirectUri: string, graceMs?: number): Promise<CallbackServer> {
  const s = await startCallbackServer({ redirectUri, expectation, log, ...(graceMs === undefined ? {} : { graceMs }) });
  open.push(s);
  return s;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw HTTP request, so the Host header and the address can be anything a hostile client would send. */
function send(opts: {
  host: string;
  port: number;
  path: string;
  method?: string;
  hostHeader?: string | null;
}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (opts.hostHeader !== null)
      headers.host = opts.hostHeader ?? `${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}`;
    const req = request(
      {
        host: opts.host,
        port: opts.port,
        path: opts.path,
        method: opts.method ?? 'GET',
        headers,
        setHost: false,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const portOf = (uri: string) => Number(new URL(uri).port);

function occupy(host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen({ host, port, ipv6Only: host.includes(':') }, () => {
      blockers.push(s);
      resolve(s);
    });
  });
}

async function ipv6Available(): Promise<boolean> {
  try {
    const s = await occupy('::1', 0);
    blockers.splice(blockers.indexOf(s), 1);
    await new Promise((r) => s.close(r));
    return true;
  } catch {
    return false;
  }
}

describe('parseLoopbackRedirect', () => {
  it('keeps the path and binds the right addresses', () => {
    expect(parseLoopbackRedirect('http://127.0.0.1:8765/callback')).toMatchObject({
      bindAddresses: ['127.0.0.1'],
      port: 8765,
      path: '/callback',
    });
    expect(parseLoopbackRedirect('http://[::1]:0')).toMatchObject({
      bindAddresses: ['::1'],
      port: 0,
      path: '/',
      rest: '',
    });
    expect(parseLoopbackRedirect('http://localhost:9/a?x=1')).toMatchObject({
      bindAddresses: ['127.0.0.1', '::1'],
      path: '/a',
      rest: '/a?x=1',
    });
    expect(() => parseLoopbackRedirect('http://0.0.0.0:80/cb')).toThrow(
      expect.objectContaining({ code: 'SETTING_INVALID' }),
    );
    expect(() => parseLoopbackRedirect('https://127.0.0.1:80/cb')).toThrow(
      expect.objectContaining({ code: 'SETTING_INVALID' }),
    );
  });
  it('refuses what the redirect-uri setting refuses: the rest of 127/8 and an upper-case scheme or host', () => {
    for (const uri of ['http://127.0.0.2:8765/cb', 'HTTP://127.0.0.1:8765/cb', 'http://LOCALHOST:8765/cb']) {
      expect(() => parseLoopbackRedirect(uri)).toThrow(expect.objectContaining({ code: 'SETTING_INVALID' }));
    }
  });
});

describe('the loopback listener', () => {
  it('puts the port it bound into the redirect URI', async () => {
    const s = await start('http://127.0.0.1:0/cb');
    expect(s.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*\/cb$/);
  });

  it('answers only GET on the callback path and checks Host and state', async () => {
    const s = await start('http://127.0.0.1:0/callback');
    const port = portOf(s.redirectUri);
    const at = (path: string, extra: Partial<Parameters<typeof send>[0]> = {}) =>
      send({ host: '127.0.0.1', port, path, ...extra });
    expect((await at('/')).status).toBe(404);
    expect((await at('/favicon.ico')).status).toBe(404);
    expect((await at('/done')).status).toBe(404); // nothing to show before the callback
    const post = await at('/callback?code=c&state=expected-state', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET');
    expect((await at('/callback?code=c&state=expected-state', { method: 'HEAD' })).status).toBe(405);
    expect((await at('/callback?code=c&state=expected-state', { hostHeader: `evil.example:${port}` })).status).toBe(
      400,
    );
    expect((await at('/callback?code=c&state=expected-state', { hostHeader: `localhost:${port}` })).status).toBe(400);
    expect((await at('/callback?code=c&state=expected-state', { hostHeader: null })).status).toBe(400);
    const forged = await at('/callback?code=c&state=forged');
    expect(forged.status).toBe(400);
    expect(forged.body).toContain('does not belong');
    expect((await at('/callback?code=c')).status).toBe(400);

    // Still waiting after all of that: the real callback is accepted.
    const waiting = s.wait(10_000, new AbortController().signal);
    const ok = await at('/callback?code=the-code&state=expected-state');
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe('/done');
    expect(ok.headers['cache-control']).toBe('no-store');
    expect(await waiting).toEqual({ kind: 'code', code: 'the-code' });
    // A replay is refused.
    expect((await at('/callback?code=the-code&state=expected-state')).status).toBe(400);

    // The done page waits for the outcome, then shows it without the code.
    const doneRequests = () => logged.filter((l) => l === '* loopback: GET /done\n').length;
    const earlier = doneRequests();
    const page = at('/done');
    await until(() => (doneRequests() > earlier ? true : undefined), 10_000, 'the done request');
    await s.close({ ok: true, message: 'Signed in as <Alice>.' });
    const shown = await page;
    expect(shown.status).toBe(200);
    expect(shown.body).toContain('Signed in as &#60;Alice&#62;.');
    expect(shown.body).not.toContain('the-code');
    expect(shown.headers['content-security-policy']).toContain("default-src 'none'");
    await expect(at('/done')).rejects.toThrow(); // closed
  });

  it('reports an error callback that carries our state', async () => {
    const s = await start('http://127.0.0.1:0/callback');
    const port = portOf(s.redirectUri);
    const waiting = s.wait(10_000, new AbortController().signal);
    await send({ host: '127.0.0.1', port, path: '/callback?error=access_denied&state=expected-state' });
    expect(await waiting).toEqual({ kind: 'error', error: 'access_denied' });
  });

  it('does not hold the CLI when the browser never follows the 303', async () => {
    const s = await start('http://127.0.0.1:0/callback', 300);
    await send({ host: '127.0.0.1', port: portOf(s.redirectUri), path: '/callback?code=x&state=expected-state' });
    // Closing ends after the grace, not when the browser comes: a deadline far beyond the grace says it did.
    let timer: NodeJS.Timeout | undefined;
    const closed = s.close({ ok: true, message: 'done' }).then(() => 'closed');
    const deadline = new Promise((r) => (timer = setTimeout(r, 10_000, 'still waiting for the browser')));
    expect(await Promise.race([closed, deadline])).toBe('closed');
    clearTimeout(timer);
  }, 20_000);

  it("waits for the browser to follow the 303 exactly its grace, on the run's clock", async () => {
    const clock = new FakeClock();
    const s = await startCallbackServer({ redirectUri: 'http://127.0.0.1:0/callback', expectation, log, clock });
    open.push(s);
    await send({ host: '127.0.0.1', port: portOf(s.redirectUri), path: '/callback?code=x&state=expected-state' });
    let closed = false;
    const closing = s.close({ ok: true, message: 'done' }).then(() => (closed = true));
    await until(() => (clock.pending().length > 0 ? true : undefined), 10_000, 'the grace to start');
    expect(clock.pending()).toEqual([1000]);
    clock.advance(999);
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    clock.advance(1);
    await closing;
    expect(closed).toBe(true);
  });

  it('a browser that follows the 303 during the grace is shown the outcome, and ends the grace then', async () => {
    const clock = new FakeClock();
    const s = await startCallbackServer({ redirectUri: 'http://127.0.0.1:0/callback', expectation, log, clock });
    open.push(s);
    const port = portOf(s.redirectUri);
    await send({ host: '127.0.0.1', port, path: '/callback?code=x&state=expected-state' });
    let closed = false;
    const closing = s.close({ ok: true, message: 'Signed in as Alice.' }).then(() => (closed = true));
    await until(() => (clock.pending().length > 0 ? true : undefined), 10_000, 'the grace to start');
    clock.advance(500);
    const shown = await send({ host: '127.0.0.1', port, path: '/done' });
    expect(shown.status).toBe(200);
    expect(shown.body).toContain('Signed in as Alice.');
    // No more of the grace had to pass.
    await until(() => (closed ? true : undefined), 5_000, 'close() to end with the grace still running');
    await closing;
    expect(clock.pending()).toEqual([]);
  });

  it('a browser that comes after the grace finds the server closed, not one still listening', async () => {
    const clock = new FakeClock();
    const s = await startCallbackServer({ redirectUri: 'http://127.0.0.1:0/callback', expectation, log, clock });
    open.push(s);
    const port = portOf(s.redirectUri);
    await send({ host: '127.0.0.1', port, path: '/callback?code=x&state=expected-state' });
    const closing = s.close({ ok: true, message: 'done' });
    await clock.elapse(1000, 'the grace');
    await closing;
    await expect(send({ host: '127.0.0.1', port, path: '/done' })).rejects.toThrow(/ECONNREFUSED/);
  });

  it('times out with exit 3 and stops on abort with exit 130', async () => {
    const s = await start('http://127.0.0.1:0/callback');
    const timedOut = await s.wait(200, new AbortController().signal).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(IdcliError);
    expect((timedOut as IdcliError).exitCode).toBe(3);
    expect((timedOut as IdcliError).code).toBe('SIGN_IN_TIMED_OUT');
    const ac = new AbortController();
    const waiting = s.wait(10_000, ac.signal).catch((e: unknown) => e);
    ac.abort();
    const aborted = await waiting;
    expect((aborted as IdcliError).exitCode).toBe(130);
    expect((aborted as IdcliError).code).toBe('INTERRUPTED');
  });

  it('names a busy port', async () => {
    const blocker = await occupy('127.0.0.1', 0);
    const port = (blocker.address() as { port: number }).port;
    const err = await start(`http://127.0.0.1:${port}/callback`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdcliError);
    expect((err as IdcliError).exitCode).toBe(2);
    expect((err as IdcliError).code).toBe('CALLBACK_PORT_IN_USE');
    expect((err as IdcliError).message).toContain(String(port));
  });

  it('takes both loopback families for localhost, so no other process can take the code', async () => {
    const s = await start('http://localhost:0/callback');
    const port = portOf(s.redirectUri);
    expect(s.redirectUri).toBe(`http://localhost:${port}/callback`);
    await expect(occupy('127.0.0.1', port)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    if (await ipv6Available()) {
      await expect(occupy('::1', port)).rejects.toMatchObject({ code: 'EADDRINUSE' });
      expect((await send({ host: '::1', port, path: '/x', hostHeader: `localhost:${port}` })).status).toBe(404);
    }
    expect((await send({ host: '127.0.0.1', port, path: '/x', hostHeader: `localhost:${port}` })).status).toBe(404);
  });

  it('refuses localhost when the other family is taken on that port', async () => {
    if (!(await ipv6Available())) return; // nothing can squat on ::1 without IPv6, which is the property tested
    const squatter = await occupy('::1', 0);
    const port = (squatter.address() as { port: number }).port;
    const err = await start(`http://localhost:${port}/callback`).catch((e: unknown) => e);
    expect((err as IdcliError).exitCode).toBe(2);
    expect((err as IdcliError).code).toBe('CALLBACK_PORT_IN_USE');
    expect((err as IdcliError).message).toContain('on ::1');
  });

  it('binds [::1] alone when asked', async () => {
    if (!(await ipv6Available())) {
      await expect(start('http://[::1]:0/cb')).rejects.toBeInstanceOf(IdcliError);
      return;
    }
    const s = await start('http://[::1]:0/cb');
    const port = portOf(s.redirectUri);
    expect(s.redirectUri).toBe(`http://[::1]:${port}/cb`);
    expect((await send({ host: '::1', port, path: '/cb?state=no' })).status).toBe(400);
  });
});

describe('a pasted address', () => {
  it('is checked like a callback: host, port and path of the redirect URI, then the state', async () => {
    const s = await start('http://127.0.0.1:0/callback');
    const port = Number(new URL(s.redirectUri).port);
    const good = `http://127.0.0.1:${port}/callback?code=the-code&state=expected-state`;
    const refusal = (address: string) => {
      const v = s.offer(address);
      return v.taken ? undefined : v.reason;
    };
    expect(refusal('just some words')).toMatch(/^that is not an address/);
    expect(refusal(good.replace('http:', 'https:'))).toMatch(/^that is not this sign-in's address/);
    expect(refusal(good.replace('127.0.0.1', 'localhost'))).toMatch(/^that is not this sign-in's address/);
    expect(refusal(good.replace(`:${port}/`, `:${port === 65535 ? 1024 : port + 1}/`))).toMatch(
      /^that is not this sign-in's address: it starts with http:\/\/127\.0\.0\.1:\d+\/callback$/,
    );
    expect(refusal(good.replace('/callback', '/done'))).toMatch(/^that is not this sign-in's address/);
    expect(refusal(good.replace('expected-state', 'other-state'))).toMatch(/^that address is from another sign-in/);
    expect(refusal(good.replace('&state=expected-state', ''))).toMatch(/\(missing state\)/);
    expect(refusal(`${good}&state=expected-state`)).toMatch(/\(repeated parameter state\)/);
    // None of the refusals repeats what was pasted.
    expect(refusal(good.replace('expected-state', 'other-state'))).not.toContain('the-code');

    expect(refusal(`  ${good}\n`)).toBeUndefined();
    expect(await s.wait(5_000, new AbortController().signal)).toEqual({ kind: 'code', code: 'the-code' });
    // The browser that comes after is told the sign-in was handled, and a second paste is refused.
    const late = await send({ host: '127.0.0.1', port, path: '/callback?code=c&state=expected-state' });
    expect(late.status).toBe(400);
    expect(late.body).toContain('already been handled');
    expect(refusal(good)).toBe('this sign-in has already been handled');
  });

  it('ends the sign-in like a callback when it carries an error from the server', async () => {
    const s = await start('http://127.0.0.1:0/callback');
    const { port } = new URL(s.redirectUri);
    expect(s.offer(`http://127.0.0.1:${port}/callback?error=access_denied&state=expected-state`)).toEqual({
      taken: true,
    });
    expect(await s.wait(5_000, new AbortController().signal)).toEqual({ kind: 'error', error: 'access_denied' });
  });

  it('refuses one without a code or with another issuer, and still takes the browser after', async () => {
    const t = await start('http://127.0.0.1:0/callback');
    const other = new URL(t.redirectUri);
    const refusal = (address: string) => {
      const v = t.offer(address);
      return v.taken ? undefined : v.reason;
    };
    expect(refusal(`${other.href}?code=c&state=expected-state&iss=https%3A%2F%2Fevil.example`)).toBe(
      'that address names another issuer (iss) than http://127.0.0.1:1: copy all of it, with everything after "?"; if it was whole, check the issuer setting (IDCLI_ISSUER)',
    );
    // Cut off inside `iss`: the same.
    expect(refusal(`${other.href}?code=c&state=expected-state&iss=http%3A%2F%2F127.0.0.1%3A`)).toMatch(
      /another issuer/,
    );
    expect(refusal(`${other.href}?state=expected-state`)).toBe(
      'that address carries no code: copy all of it, with everything after "?"',
    );
    expect(refusal(`${other.href}?code=&state=expected-state`)).toMatch(/carries no code/);
    const { port } = other;
    const browser = await send({
      host: '127.0.0.1',
      port: Number(port),
      path: '/callback?code=c&state=expected-state',
    });
    expect(browser.status).toBe(303);
    expect(await t.wait(5_000, new AbortController().signal)).toEqual({ kind: 'code', code: 'c' });
  });

  it('waits again after reopen(), for the browser or another paste, naming the whole wait in its timeout', async () => {
    const s = await start('http://127.0.0.1:0/callback');
    const good = `${s.redirectUri}?code=cut&state=expected-state`;
    expect(s.offer(good).taken).toBe(true);
    expect(await s.wait(5_000, new AbortController().signal)).toEqual({ kind: 'code', code: 'cut' });
    s.reopen();
    expect(s.offer(good.replace('cut', 'whole')).taken).toBe(true);
    expect(await s.wait(5_000, new AbortController().signal)).toEqual({ kind: 'code', code: 'whole' });
    s.reopen();
    const err = await s.wait(1, new AbortController().signal, 60_000).catch((e: unknown) => e);
    expect((err as IdcliError).code).toBe('SIGN_IN_TIMED_OUT');
    expect((err as IdcliError).message).toContain('60 s');
    expect((err as IdcliError).exitCode).toBe(3);
  });

  it('names the port of a localhost redirect URI as written, and the default port 80 of an address', async () => {
    const s = await start('http://localhost:0/cb');
    const { port } = new URL(s.redirectUri);
    expect(s.offer(`http://localhost:${port}/cb?code=c&state=expected-state`).taken).toBe(true);
    expect(s.offer('http://localhost/cb?code=c&state=expected-state')).toMatchObject({ taken: false });
  });
});

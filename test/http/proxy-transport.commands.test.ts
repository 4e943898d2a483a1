/**
 * idcli behind a forward proxy on loopback, each command run in process: HTTP_PROXY/HTTPS_PROXY route every request
 * (the pages of `list` and the token refresh), NO_PROXY bypasses it, the proxy's credentials are sent to it and
 * printed nowhere, and a proxy that is down is named in a one-line error. That only a proxied request loads undici
 * is in test/e2e/proxy-cli.test.ts.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../emulator/index.js';
import { cliEnv, listEnv, type ListEnv } from '../support/list.js';
import type { CliResult } from '../support/cli.js';
import { runCommand } from '../support/run-command.js';
import { storeExpiredSignIn } from '../support/sign-in.js';
import { type ForwardProxy, STACK_FRAME, startForwardProxy } from '../support/proxy.js';
import { unusedPort } from '../support/listen.js';

const USER = 'corp.user';
const PASSWORD = 'Pr0xyPa55-word';

let emu: Emulator;
let env: ListEnv & { cleanup: () => Promise<void> };
let proxy: ForwardProxy;
let authProxy: ForwardProxy;

beforeEach(async () => {
  emu = await startEmulator();
  env = await listEnv(emu, undefined);
  proxy = await startForwardProxy();
  authProxy = await startForwardProxy({ credentials: { user: USER, password: PASSWORD } });
});

afterEach(async () => {
  await proxy.close();
  await authProxy.close();
  await emu.close();
  await env.cleanup();
});

function run(args: string[], extra: Record<string, string | undefined> = {}, stdin?: string): Promise<CliResult> {
  return runCommand(args, { env: cliEnv(env, extra), ...(stdin !== undefined && { stdin }) });
}

function withCredentials(p: ForwardProxy): string {
  return `http://${USER}:${PASSWORD}@127.0.0.1:${p.port}`;
}

function expectClean(r: CliResult): void {
  expect(r.stdout + r.stderr).not.toContain(PASSWORD);
  expect(r.stderr).not.toMatch(STACK_FRAME);
}

describe('idcli behind HTTP_PROXY / HTTPS_PROXY', () => {
  it('list: every page goes through the proxy, in absolute form, and the output is what a direct run prints', async () => {
    env.token = emu.mintTokens().access_token;
    const direct = await run(['list', '/v1/users', '--page-size', '40']);
    expect(direct.code).toBe(0);
    const before = emu.requests.length;

    const r = await run(['list', '/v1/users', '--page-size', '40'], { HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(direct.stdout);
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(250);
    const seen = emu.requests.slice(before).map((q) => `${emu.baseUrl}${q.url}`);
    expect(seen).toHaveLength(7);
    // Pages are prefetched, so arrival order at the proxy and at the emulator may differ by a request.
    expect(proxy.hits.map((h) => `${h.method} ${h.target}`).sort()).toEqual(seen.map((u) => `GET ${u}`).sort());
  });

  it('list through the proxy decodes br and gzip as a direct run does, and stops a bomb after one request', async () => {
    env.token = emu.mintTokens().access_token;
    const identity = await run(['list', '/v1/users', '--page-size', '40'], { IDCLI_HTTP_COMPRESSION: '0' });
    expect(identity.code).toBe(0);
    const proxied = { HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url };
    const br = await run(['list', '/v1/users', '--page-size', '40', '--verbose'], proxied);
    expect(br.code).toBe(0);
    expect(br.stderr).toMatch(/ -> 200 \(\d+ ms, \d+ bytes, br\)/);
    expect(br.stdout).toBe(identity.stdout);
    emu.inject({
      path: '/v1/users',
      nth: 1,
      times: Number.POSITIVE_INFINITY,
      fault: { kind: 'encoding', coding: 'gzip' },
    });
    const gzip = await run(['list', '/v1/users', '--page-size', '40', '--verbose'], proxied);
    expect(gzip.code).toBe(0);
    expect(gzip.stderr).toMatch(/ -> 200 \(\d+ ms, \d+ bytes, gzip\)/);
    expect(gzip.stdout).toBe(identity.stdout);

    emu.clearFaults();
    emu.inject({ path: '/v1/users', nth: 1, fault: { kind: 'gzip-bomb' } });
    const before = proxy.hits.length;
    const bomb = await run(['list', '/v1/users'], proxied);
    expect(bomb.code).toBe(4);
    expect(bomb.stderr).toMatch(/response too large \(over \d+ bytes decoded\)/);
    expect(proxy.hits.length - before).toBe(1);
    expectClean(bomb);
  });

  it('a token refresh (POST /oauth/token) goes through the proxy too, with the proxy credentials, printed nowhere', async () => {
    await storeExpiredSignIn({ emu, configDir: env.configDir });
    const r = await run(['token', '--verbose'], { http_proxy: withCredentials(authProxy) });
    expectClean(r);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\S+\n$/);
    expect(emu.tokenEvents.filter((e) => e.grant === 'refresh_token' && e.ok)).toHaveLength(1);
    expect(authProxy.hits.map((h) => `${h.method} ${h.target}`)).toEqual([`POST ${emu.baseUrl}/oauth/token`]);
    expect(authProxy.hits[0]?.proxyAuthorization).toBe(
      `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`,
    );
    expect(authProxy.hits[0]?.forwardedHeaders).not.toContain('proxy-authorization');
    // --verbose says which proxy is in use, without the credentials.
    expect(r.stderr).toContain(`http:// through http://127.0.0.1:${authProxy.port} (http_proxy)`);
    expect(r.stderr).not.toContain(USER);

    // The new access token is then used by list, through the same proxy.
    const l = await run(['list', '/v1/users', '--limit', '3'], { http_proxy: withCredentials(authProxy) });
    expectClean(l);
    expect(l.code).toBe(0);
    expect(l.stdout.split('\n').filter(Boolean)).toHaveLength(3);
    expect(authProxy.hits.slice(1).map((h) => h.target.split('?')[0])).toEqual([`${emu.baseUrl}/v1/users`]);
  });

  it('api --input through the proxy: a file with its Content-Length, over 64 MB of stdin chunked, both whole', async () => {
    env.token = emu.mintTokens().access_token;
    const file = join(env.configDir, 'body.json');
    await writeFile(file, '{"from":"a file"}');
    const r = await run(['api', '/v1/echo', '--input', file], { HTTP_PROXY: proxy.url });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ body: '{"from":"a file"}', headers: { 'content-length': '17' } });

    const size = 70 * 1024 * 1024;
    const big = await run(
      ['api', '-X', 'PUT', '/v1/upload', '--input', '-'],
      { HTTP_PROXY: proxy.url },
      'x'.repeat(size),
    );
    expect(big.code).toBe(0);
    expect(JSON.parse(big.stdout)).toEqual({ received: size });
    expect(big.stderr).toContain('stdin is over 64 MB');
    expect(emu.requests.at(-1)?.headers['transfer-encoding']).toBe('chunked');
    expect(proxy.hits.map((h) => `${h.method} ${h.target}`)).toEqual([
      `POST ${emu.baseUrl}/v1/echo`,
      `PUT ${emu.baseUrl}/v1/upload`,
    ]);
  });

  it('NO_PROXY=127.0.0.1 bypasses the proxy for list and for the refresh', async () => {
    await storeExpiredSignIn({ emu, configDir: env.configDir });
    const proxyEnv = { HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url, NO_PROXY: '127.0.0.1' };
    const t = await run(['token'], proxyEnv);
    expect(t.code).toBe(0);
    const l = await run(['list', '/v1/events'], proxyEnv);
    expect(l.stderr).toBe('');
    expect(l.code).toBe(0);
    expect(l.stdout.split('\n').filter(Boolean)).toHaveLength(230);
    expect(proxy.hits).toEqual([]);
  });

  it('a proxy that is down: exit 4, one line naming the proxy without its credentials', async () => {
    const port = await unusedPort();
    const down = `http://${USER}:${PASSWORD}@127.0.0.1:${port}`;
    env.token = emu.mintTokens().access_token;
    const before = emu.requests.length;
    const l = await run(['list', '/v1/users', '--max-retries', '1'], { HTTPS_PROXY: down, HTTP_PROXY: down });
    expectClean(l);
    expect(l.code).toBe(4);
    expect(l.stdout).toBe('');
    expect(l.stderr).toMatch(
      new RegExp(
        `^error: GET ${emu.baseUrl}/v1/users\\S* failed: cannot connect to the proxy http://127\\.0\\.0\\.1:${port}: connection refused \\(after 1 retry\\)\\n$`,
      ),
    );

    env.token = undefined;
    await storeExpiredSignIn({ emu, configDir: env.configDir });
    const t = await run(['token'], { HTTP_PROXY: down });
    expectClean(t);
    expect(t.code).toBe(4);
    expect(t.stderr).toBe(
      `error: POST ${emu.baseUrl}/oauth/token failed: cannot connect to the proxy http://127.0.0.1:${port}: connection refused\n`,
    );
    expect(emu.requests.length).toBe(before);
  });

  it('a proxy that refuses the credentials: exit 4 at once, saying it wants authentication', async () => {
    env.token = emu.mintTokens().access_token;
    const r = await run(['list', '/v1/users'], {
      HTTP_PROXY: `http://${USER}:wrong-${PASSWORD}@127.0.0.1:${authProxy.port}`,
    });
    expectClean(r);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(
      `the proxy http://127.0.0.1:${authProxy.port} requires authentication (HTTP 407 Proxy Authentication Required)`,
    );
    expect(authProxy.hits).toHaveLength(1);
  });

  it('a CONNECT refused for its credentials: exit 4 at once with the message of a forwarded request', async () => {
    // The tunnel is refused before any TLS, so nothing needs to listen at the https:// target.
    const target = `https://127.0.0.1:${await unusedPort()}`;
    env.token = emu.mintTokens().access_token;
    const r = await run(['api', `${target}/v1/users`, '--api-base-url', target], {
      HTTPS_PROXY: `http://${USER}:wrong-${PASSWORD}@127.0.0.1:${authProxy.port}`,
    });
    expectClean(r);
    expect(r.code).toBe(4);
    expect(r.stderr).toBe(
      `error: GET ${target}/v1/users failed: the proxy http://127.0.0.1:${authProxy.port} requires authentication (HTTP 407 Proxy Authentication Required)\n`,
    );
    expect(authProxy.hits.map((h) => h.method)).toEqual(['CONNECT']);
  });

  it('a CONNECT refused with a redirect: exit 4 at once, naming the proxy and the status', async () => {
    const refusing = await startForwardProxy({ refuseConnect: 302 });
    try {
      const target = `https://127.0.0.1:${await unusedPort()}`;
      env.token = emu.mintTokens().access_token;
      const r = await run(['api', `${target}/v1/users`, '--api-base-url', target], { HTTPS_PROXY: refusing.url });
      expectClean(r);
      expect(r.code).toBe(4);
      expect(r.stderr).toBe(
        `error: GET ${target}/v1/users failed: the proxy ${refusing.url} refused the tunnel with status 302 Found\n`,
      );
      expect(refusing.hits.map((h) => h.method)).toEqual(['CONNECT']);
    } finally {
      await refusing.close();
    }
  });

  it('a malformed proxy variable: exit 2 naming the variable, not its value', async () => {
    env.token = emu.mintTokens().access_token;
    const r = await run(['list', '/v1/users'], {
      HTTPS_PROXY: `http://${USER}:${PASSWORD}@[proxy`,
      HTTP_PROXY: `http://${USER}:${PASSWORD}@[proxy`,
    });
    expectClean(r);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: HTTP_PROXY is not a valid proxy URL; use http://[user:password@]host:port\n');
  });

  it('doctor checks reachability through the proxy', async () => {
    const r = await run(['doctor', '--json'], {
      HTTPS_PROXY: withCredentials(authProxy),
      HTTP_PROXY: withCredentials(authProxy),
    });
    expectClean(r);
    const report = JSON.parse(r.stdout) as { checks: Array<{ id: string; status: string; detail: string }> };
    expect(report.checks.find((c) => c.id === 'reachable')?.status).toBe('pass');
    expect(authProxy.hits.map((h) => `${h.method} ${h.target}`)).toEqual([`GET ${emu.baseUrl}/oauth/authorize`]);
  });
});

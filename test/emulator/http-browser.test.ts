import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { authorizeUrl, exchangeFields, pkcePair, token } from './helpers.js';
import { type Emulator, type RegisteredClient, startEmulator } from './index.js';

const SCRIPT = fileURLToPath(new URL('../support/http-browser.mjs', import.meta.url));

interface Run {
  exit: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the script the way idcli does: the executable itself, the URL as its one argument, no shell. */
function runBrowser(url: string, env: Record<string, string>): Promise<Run> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HTTP_BROWSER_')));
  return new Promise((resolve, reject) => {
    const child = spawn(SCRIPT, [url], { env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (exit) => resolve({ exit, stdout, stderr }));
  });
}

describe('test/support/http-browser.mjs', { timeout: 60_000 }, () => {
  let emu: Emulator;
  let listener: Server;
  let hits: URL[];
  let client: RegisteredClient;
  let dir: string;
  let logFile: string;

  beforeEach(async () => {
    hits = [];
    // A stand-in for idcli's loopback listener: records the callback and answers a short page.
    listener = createServer((req, res) => {
      hits.push(new URL(req.url ?? '/', 'http://127.0.0.1'));
      res.writeHead(200, { 'content-type': 'text/html' }).end('<p>You can close this window.</p>');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as AddressInfo).port;
    emu = await startEmulator();
    client = emu.registerClient({ name: 'browser-test', callbackUrl: `http://127.0.0.1:${port}/callback` });
    dir = await mkdtemp(join(tmpdir(), 'http-browser-'));
    logFile = join(dir, 'browser.log');
  });

  afterEach(async () => {
    expect(emu.errors).toEqual([]);
    await emu.close();
    await new Promise<void>((resolve) => listener.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  function startUrl(overrides: Record<string, string | undefined> = {}) {
    const pkce = pkcePair();
    const url = authorizeUrl(emu, pkce.challenge, {
      client_id: client.id,
      scope: `openid ${client.name}`,
      redirect_uri: client.callbackUrl,
      ...overrides,
    });
    return { url, pkce };
  }

  async function exchange(code: string, verifier: string) {
    const fields = { ...exchangeFields(emu, code, verifier), client_id: client.id, redirect_uri: client.callbackUrl };
    return token(emu, fields);
  }

  it('signs in through the form and delivers the callback; logs redacted URLs only, prints nothing', async () => {
    const { url, pkce } = startUrl();
    const run = await runBrowser(url, { HTTP_BROWSER_LOG: logFile });
    expect(run.exit).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('');
    expect(hits).toHaveLength(1);
    const hit = hits[0] as URL;
    expect(hit.pathname).toBe('/callback');
    expect(hit.searchParams.get('state')).toBe('st-123');
    const code = hit.searchParams.get('code') as string;
    expect((await exchange(code, pkce.verifier)).status).toBe(200);
    expect(emu.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'GET /oauth/authorize 200',
      'POST /oauth/login 302',
      'POST /oauth/token 200',
    ]);
    const log = await readFile(logFile, 'utf8');
    expect(log).toContain('/oauth/authorize?client_id=***');
    expect(log).toContain('/callback?code=***&state=***');
    for (const secret of [...emu.secrets(), pkce.challenge, 'st-123', emu.user.password])
      expect(log).not.toContain(secret);
  });

  it('cancel: the callback receives access_denied', async () => {
    const run = await runBrowser(startUrl().url, { HTTP_BROWSER_ACTION: 'cancel' });
    expect(run.exit).toBe(0);
    expect(hits[0]?.searchParams.get('error')).toBe('access_denied');
    expect(hits[0]?.searchParams.get('code')).toBeNull();
  });

  it('signup: fills the sign-up form with the given email, name and password', async () => {
    const { url, pkce } = startUrl({ prompt: 'create', login_hint: 'dave@example.com' });
    const run = await runBrowser(url, {
      HTTP_BROWSER_ACTION: 'signup',
      HTTP_BROWSER_NAME: 'Dave New',
      HTTP_BROWSER_PASSWORD: 'dave-password-1',
    });
    expect(run.exit).toBe(0);
    const tokens = await exchange(hits[0]?.searchParams.get('code') as string, pkce.verifier);
    expect(emu.verifyIdToken(String(tokens.body['id_token']))).toMatchObject({
      email: 'dave@example.com',
      name: 'Dave New',
    });
  });

  it('none: does nothing and exits 0 at once', async () => {
    const run = await runBrowser(startUrl().url, { HTTP_BROWSER_ACTION: 'none' });
    expect(run.exit).toBe(0);
    expect(emu.requests).toHaveLength(0);
    expect(hits).toHaveLength(0);
  });

  it('wrong-state: delivers a forged state first, then the right one', async () => {
    const run = await runBrowser(startUrl().url, { HTTP_BROWSER_ACTION: 'wrong-state' });
    expect(run.exit).toBe(0);
    expect(hits.map((h) => h.searchParams.get('state'))).toEqual(['st-123-forged', 'st-123']);
    expect(hits[0]?.searchParams.get('code')).toBe(hits[1]?.searchParams.get('code'));
  });

  it('keeps the SSO cookie in HTTP_BROWSER_COOKIES across runs', async () => {
    const cookies = join(dir, 'cookies.json');
    expect((await runBrowser(startUrl().url, { HTTP_BROWSER_COOKIES: cookies })).exit).toBe(0);
    const before = emu.requests.length;
    const second = startUrl({ prompt: 'none' });
    expect((await runBrowser(second.url, { HTTP_BROWSER_COOKIES: cookies })).exit).toBe(0);
    expect(emu.requests.slice(before).map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'GET /oauth/authorize 302',
    ]);
    const code = hits[1]?.searchParams.get('code') as string;
    expect((await exchange(code, second.pkce.verifier)).status).toBe(200);
    // Without the jar there is no session: prompt=none comes back with login_required.
    expect((await runBrowser(startUrl({ prompt: 'none' }).url, {})).exit).toBe(0);
    expect(hits[2]?.searchParams.get('error')).toBe('login_required');
  });

  it('exits 1 without reaching the callback when the password is wrong', async () => {
    const run = await runBrowser(startUrl().url, { HTTP_BROWSER_PASSWORD: 'wrong', HTTP_BROWSER_LOG: logFile });
    expect(run.exit).toBe(1);
    expect(hits).toHaveLength(0);
    expect(await readFile(logFile, 'utf8')).toContain('the form came back');
  });

  it('exits 1 on an error page (no redirect to follow)', async () => {
    const run = await runBrowser(startUrl({ redirect_uri: 'http://127.0.0.1:1/other' }).url, {});
    expect(run.exit).toBe(1);
    expect(hits).toHaveLength(0);
  });
});

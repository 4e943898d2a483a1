import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPkcePair } from '../../../src/oauth/pkce.js';
import { FileStore } from '../../../src/store/file-store.js';
import { type Emulator, startEmulator } from '../../emulator/index.js';
import { listCommand, listEnv, type ListEnv, ndjson, plainItems } from '../../support/list.js';

let emu: Emulator;
let env: ListEnv & { cleanup: () => Promise<void> };
const ITEMS = plainItems(250);

/** A stored sign-in as `idcli login` leaves it, with the access token expiring `ttlSec` from now. */
async function signIn(ttlSec: number): Promise<void> {
  const pair = createPkcePair();
  const t = emu.mintTokens({ nextChallenge: pair.challenge });
  const now = Date.now();
  await new FileStore({ configDir: env.configDir }).write(
    { baseUrl: emu.baseUrl, clientId: emu.client.id, profile: 'default' },
    {
      version: 1,
      refreshToken: t.refresh_token,
      codeVerifier: pair.verifier,
      accessToken: t.access_token,
      tokenType: 'Bearer',
      expiresAt: now + ttlSec * 1000,
      idToken: t.id_token,
      scope: t.scope,
      updatedAt: now,
      generation: 0,
    },
  );
}

beforeEach(async () => {
  emu = await startEmulator();
  env = await listEnv(emu, undefined);
  emu.setCollection('/v1/items', { type: 'offset', items: ITEMS });
});

afterEach(async () => {
  await emu.close();
  await env.cleanup();
});

function refreshes(): number {
  return emu.tokenEvents.filter((e) => e.grant === 'refresh_token' && e.ok).length;
}

describe('idcli list: the access token', () => {
  it('expiring mid-walk (401): refreshed once, the page retried, the output complete', async () => {
    await signIn(3600);
    let seen = 0;
    emu.onRequest((q) => {
      // Runs as page 2's request arrives, before its token is checked: that token is now stale and answers 401.
      if (q.path === '/v1/items' && ++seen === 2) emu.expireAccessTokens();
    });
    // Request order decides which request the expiry hits: one page at a time, as the walk follows its links.
    const r = await listCommand(env, ['/v1/items', '--verbose', '--concurrency', '1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(ITEMS));
    expect(refreshes()).toBe(1);
    const pages = emu.requests.filter((q) => q.path === '/v1/items');
    expect(pages.map((q) => q.status)).toEqual([200, 401, 200, 200]);
    // The retry of page 2 and page 3 carry the refreshed token.
    expect(pages[2]!.bearer).not.toBe(pages[1]!.bearer);
    expect(pages[3]!.bearer).toBe(pages[2]!.bearer);
    // --verbose traced the walk, yet no token, code or verifier appears anywhere.
    expect(r.stderr).toMatch(/GET .*\/v1\/items.* -> 401/);
    for (const secret of emu.secrets()) {
      expect(r.stderr).not.toContain(secret);
      expect(r.stdout).not.toContain(secret);
    }
  }, 60_000);

  it('about to expire: refreshed before the first page, no 401 at all', async () => {
    await signIn(20);
    const r = await listCommand(env, ['/v1/items']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(ITEMS));
    expect(refreshes()).toBe(1);
    expect(emu.requests.filter((q) => q.path === '/v1/items').map((q) => q.status)).toEqual([200, 200, 200]);
  }, 60_000);

  it('rejected even after a refresh: exit 3 with the pages before on stdout', async () => {
    await signIn(3600);
    emu.inject({ path: '/v1/items', nth: 2, times: 2, fault: { kind: 'status', status: 401 } });
    const r = await listCommand(env, ['/v1/items', '--concurrency', '1']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 100)));
    expect(r.stderr).toMatch(/rejected \(HTTP 401 Unauthorized\) even after a refresh/);
    expect(r.stderr).toMatch(/idcli: stopped after 100 items; resume with: idcli list '/);
  }, 60_000);

  it('a rejected IDCLI_ACCESS_TOKEN: exit 3, without printing the token', async () => {
    const bogus = 'bogus-token-value-1234567890';
    const r = await listCommand({ ...env, token: bogus }, ['/v1/items']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toContain(bogus);
    expect(emu.requests.filter((q) => q.path === '/v1/items')).toHaveLength(1);
  }, 60_000);

  it('not signed in: exit 3 before any request', async () => {
    const r = await listCommand(env, ['/v1/items']);
    expect(r.code).toBe(3);
    expect(r.requests).toHaveLength(0);
  }, 60_000);
});

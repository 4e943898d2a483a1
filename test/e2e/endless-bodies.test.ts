// Needs a process: the peak resident set of a run is measured by GNU time, outside the process it measures.
/**
 * The BUILT CLI against a server whose gzip body decodes to (almost) nothing and never ends (a header whose file
 * name runs on, empty members without end, members of one byte behind a long header field), chunked or
 * close-delimited: `list`, `api`, `doctor`, the token endpoint and a walk through a proxy each end with their
 * documented exit code, having asked once, with the peak resident set bounded. The child's peak RSS is measured by
 * GNU time, outside the process it measures. The cases run at the same time, each with a server, a config directory
 * and (for the proxy) a proxy of its own: each waits on its child.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { beforeAll, describe, type ExpectStatic, it } from 'vitest';
import { createPkcePair } from '../../src/oauth/pkce.js';
import { FileStore } from '../../src/store/file-store.js';
import { baseEnv, BIN, tempDir } from '../support/cli.js';
import {
  type EndlessBody,
  type EndlessServer,
  type Framing,
  SEND_AT_MOST,
  startEndlessServer,
} from '../support/endless-server.js';
import { STACK_FRAME, startForwardProxy } from '../support/proxy.js';

const TIME = '/usr/bin/time';
const CLIENT_ID = '6f1c2a9e-4b7d-4e2a-9c1f-2d3e4f5a6b7c';
/** The peak resident set a bounded run stays under, in KiB; an unbounded one passes it within a second. */
const RSS_BOUND_KIB = 150 * 1024;
/** Generous: a bounded run ends in about a second; this only stops a broken one. */
const HTTP_TIMEOUT_SEC = 30;

const WHY: Record<EndlessBody, RegExp> = {
  'endless-header': /the response body could not be decoded \(its gzip header does not end within 131072 bytes\)/,
  'empty-members': /the response body could not be decoded \(over 1048576 bytes of its gzip data decode to nothing\)/,
  'sparse-members': /response too large \(over 67108864 bytes received\)/,
};

interface Measured {
  code: number | null;
  stdout: string;
  stderr: string;
  peakRssKib: number;
}

/** Runs the built CLI under GNU time, which reports the child's peak resident set on its last stderr line. */
function measured(args: string[], env: Record<string, string | undefined>): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv;
    const child = spawn(TIME, ['-f', 'peak-rss-kib=%M', process.execPath, BIN, ...args], {
      env: clean,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const m = /peak-rss-kib=(\d+)\s*$/.exec(stderr);
      if (!m) return reject(new Error(`no peak RSS reported:\n${stderr}`));
      resolve({ code, stdout, stderr: stderr.slice(0, m.index), peakRssKib: Number(m[1]) });
    });
  });
}

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('build the CLI first: npm run build');
  if (!existsSync(TIME)) throw new Error(`${TIME} (GNU time) is needed to measure the peak RSS`);
});

/** A test's own endless server and config directory. */
interface Setup {
  server: EndlessServer;
  dir: string;
}

async function withServer(kind: EndlessBody, framing: Framing, test: (s: Setup) => Promise<void>): Promise<void> {
  const dir = await tempDir('idcli-endless-');
  const server = await startEndlessServer(kind, framing);
  try {
    await test({ server, dir: dir.path });
  } finally {
    await server.close();
    await dir.cleanup();
  }
}

function envFor(
  dir: string,
  baseUrl: string,
  extra: Record<string, string | undefined> = {},
): Record<string, string | undefined> {
  return baseEnv({
    IDCLI_BASE_URL: baseUrl,
    IDCLI_CLIENT_ID: CLIENT_ID,
    IDCLI_CLIENT_NAME: 'idcli-test',
    IDCLI_REDIRECT_URI: 'http://127.0.0.1:8765/callback',
    IDCLI_CONFIG_DIR: dir,
    IDCLI_CREDENTIAL_STORE: 'file',
    IDCLI_HTTP_TIMEOUT: String(HTTP_TIMEOUT_SEC),
    ...extra,
  });
}

/** A stored sign-in for `baseUrl` whose access token has expired, so `token --refresh` asks the token endpoint. */
async function storeSignIn(dir: string, baseUrl: string): Promise<void> {
  const now = Date.now();
  const token = (): string => randomBytes(32).toString('base64url');
  await new FileStore({ configDir: dir }).write(
    { baseUrl, clientId: CLIENT_ID, profile: 'default' },
    {
      version: 1,
      refreshToken: token(),
      codeVerifier: createPkcePair().verifier,
      accessToken: token(),
      tokenType: 'Bearer',
      expiresAt: now - 1000,
      scope: 'openid idcli-test',
      updatedAt: now,
      generation: 0,
    },
  );
}

/** What every run must show: bounded memory, the reason named once on stderr, no stack trace, one request. */
function expectBounded(expect: ExpectStatic, r: Measured, kind: EndlessBody, server: EndlessServer): void {
  expect(r.peakRssKib).toBeGreaterThan(10_000); // the measure is real: Node alone takes more
  expect(r.peakRssKib).toBeLessThan(RSS_BOUND_KIB);
  expect(r.stdout + r.stderr).toMatch(WHY[kind]);
  expect(r.stderr).not.toMatch(STACK_FRAME);
  expect(server.requests).toHaveLength(1);
  // The client stopped reading long before the server's own stop.
  expect(server.sent()).toBeLessThan(SEND_AT_MOST);
}

const CASES: [EndlessBody, Framing][] = [
  ['endless-header', 'chunked'],
  ['endless-header', 'close'],
  ['empty-members', 'chunked'],
  ['empty-members', 'close'],
  ['sparse-members', 'chunked'],
  ['sparse-members', 'close'],
];

describe.concurrent.each(CASES)(
  'a gzip body that decodes to (almost) nothing and never ends: %s, %s',
  (kind, framing) => {
    it.for([
      ['list', 'nothing written', '/v1/items', 'GET /v1/items?pageSize=1000'],
      ['api', 'nothing printed', '/v1/doc', 'GET /v1/doc'],
    ])('%s: exit 4, %s', { timeout: 120_000 }, ([command, , path, request], { expect }) =>
      withServer(kind, framing, async ({ server: s, dir }) => {
        const r = await measured([command!, path!], envFor(dir, s.url, { IDCLI_ACCESS_TOKEN: 'x'.repeat(40) }));
        expect(r.code, r.stderr).toBe(4);
        expect(r.stdout).toBe('');
        expectBounded(expect, r, kind, s);
        expect(s.requests).toEqual([request]);
      }),
    );

    it('doctor: the reachability check fails naming it (exit 2)', { timeout: 120_000 }, ({ expect }) =>
      withServer(kind, framing, async ({ server: s, dir }) => {
        const r = await measured(['doctor'], envFor(dir, s.url));
        expect(r.code, r.stderr).toBe(2);
        expect(r.stdout).toMatch(/FAIL +identity service reachable .*\/oauth\/authorize: /);
        expectBounded(expect, r, kind, s);
        expect(s.requests).toEqual(['GET /oauth/authorize']);
      }),
    );

    it('the token endpoint (token --refresh): exit 4, the sign-in kept', { timeout: 120_000 }, ({ expect }) =>
      withServer(kind, framing, async ({ server: s, dir }) => {
        await storeSignIn(dir, s.url);
        const r = await measured(['token', '--refresh'], envFor(dir, s.url));
        expect(r.code, r.stderr).toBe(4);
        expect(r.stdout).toBe('');
        expectBounded(expect, r, kind, s);
        expect(s.requests).toEqual(['POST /oauth/token']);
        const kept = await new FileStore({ configDir: dir }).read({
          baseUrl: s.url,
          clientId: CLIENT_ID,
          profile: 'default',
        });
        expect(kept?.refreshToken).toBeTruthy();
      }),
    );

    it('list through an HTTP proxy (the undici transport): exit 4', { timeout: 120_000 }, ({ expect }) =>
      withServer(kind, framing, async ({ server: s, dir }) => {
        const proxy = await startForwardProxy();
        try {
          const r = await measured(
            ['list', '/v1/items'],
            envFor(dir, s.url, { IDCLI_ACCESS_TOKEN: 'x'.repeat(40), HTTP_PROXY: proxy.url }),
          );
          expect(r.code, r.stderr).toBe(4);
          expect(r.stdout).toBe('');
          expectBounded(expect, r, kind, s);
          expect(proxy.hits.map((h) => `${h.method} ${h.target}`)).toEqual([`GET ${s.url}/v1/items?pageSize=1000`]);
        } finally {
          await proxy.close();
        }
      }),
    );
  },
);

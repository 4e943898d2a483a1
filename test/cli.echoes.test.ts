/**
 * What a hostile server sends is echoed within bounds, each command run in process: URLs cut to 200 characters in
 * messages, traces and the resume hint; control characters from servers never reach the terminal; a token with
 * control characters is refused before any request. That the loop guard's memory does not grow with the links'
 * length, which only a process's heap limit shows, is in test/e2e/echoes.test.ts.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { FileStore } from '../src/store/file-store.js';
import { cliEnv, listCommand as list, eachTest, ndjson, plainItems, resumeUrl } from './support/list.js';
import { baseEnv, type CliResult, tempDir } from './support/cli.js';
import { runCommand } from './support/run-command.js';
import { hostile, page } from './support/hostile-links.js';

/** A command in process, in a config directory of its own. */
async function inTempConfig(args: string[], extra: Record<string, string> = {}): Promise<CliResult> {
  const dir = await tempDir();
  try {
    return await runCommand(args, { env: baseEnv({ IDCLI_CONFIG_DIR: dir.path, ...extra }) });
  } finally {
    await dir.cleanup();
  }
}

function run(base: string, args: string[], extra: Record<string, string> = {}) {
  return inTempConfig(['list', ...args], {
    IDCLI_API_BASE_URL: base,
    IDCLI_ACCESS_TOKEN: 'token-1234567890',
    ...extra,
  });
}

const longest = (text: string) => Math.max(...text.split('\n').map((l) => l.length));

describe('long links from the server', () => {
  const PAD = 'x'.repeat(1024 * 1024);

  it('a 1 MB link that loops: exit 5, every URL on stderr cut to 200 characters, --verbose too', async () => {
    const loop = `/v1/items?cursor=${PAD}`;
    const server = await hostile(() => ({ body: page(['{"n":1}'], loop) }));
    try {
      for (const verbose of [[], ['--verbose']]) {
        const r = await run(server.url, [...verbose, '/v1/items']);
        expect(r.code).toBe(5);
        expect(r.stderr).toMatch(/pagination loop/);
        expect(r.stderr).toMatch(/…/);
        expect(longest(r.stderr)).toBeLessThan(700);
        expect(r.stderr.length).toBeLessThan(verbose.length ? 8000 : 2000);
      }
    } finally {
      await server.close();
    }
  }, 60_000);

  it('a resume URL over 200 characters is not echoed: the hint says so and gives the page index', async () => {
    const server = await hostile((u) =>
      u.searchParams.has('pageIndex')
        ? { status: 500, body: '{}' }
        : { body: page(['{"n":1}'], `/v1/items?filter=${PAD}&pageIndex=1&pageSize=1`) },
    );
    try {
      const r = await run(server.url, ['--max-retries', '0', '/v1/items']);
      expect(r.code).toBe(4);
      expect(r.stdout).toBe('{"n":1}\n');
      expect(r.stderr).toMatch(
        /stopped after 1 item; the resume URL is too long to show \(\d{7} characters\); it continues at pageIndex 1\n/,
      );
      expect(longest(r.stderr)).toBeLessThan(400);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('a cursor resume URL over 200 characters: its query, cut', async () => {
    const server = await hostile((u) =>
      u.searchParams.has('cursor')
        ? { status: 500, body: '{}' }
        : { body: page(['{"n":1}'], `/v1/items?cursor=${PAD}`) },
    );
    try {
      const r = await run(server.url, ['--max-retries', '0', '/v1/items']);
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(/the resume URL is too long to show \(\d+ characters\); its query, cut: \?cursor=x+…\n/);
      expect(longest(r.stderr)).toBeLessThan(400);
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe('control characters from servers', () => {
  const ctx = eachTest(['{"id":1}']);

  it('C1 controls in a Content-Type never reach stderr: they are shown escaped', async () => {
    ctx.emu.inject({
      path: '/v1/items',
      nth: 1,
      fault: { kind: 'body', contentType: 'text/html\u009b2J\u009d0:owned\u009c', body: '<html>' },
    });
    const r = await list(ctx.env, ['/v1/items']);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('content-type text/html\\u009b2J\\u009d0:owned\\u009c)');
    expect(r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  }, 30_000);

  it('ESC, BEL and CR in the ID token name reach `status` escaped, never raw', async () => {
    const claims = { sub: 'u1', name: 'Ada\r\u001b]0;owned\u0007\u001b[2J', email: 'ada@example.com' };
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const idToken = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64(claims)}.c2ln`;
    await new FileStore({ configDir: ctx.env.configDir }).write(
      { baseUrl: ctx.emu.baseUrl, clientId: ctx.emu.client.id, profile: 'default' },
      { version: 1, accessToken: 'abcdefgh', expiresAt: Date.now() + 600_000, idToken, updatedAt: 0, generation: 0 },
    );
    const r = await runCommand(['status'], { env: cliEnv({ ...ctx.env, token: undefined }) });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Ada\\r\\u001b]0;owned\\u0007\\u001b[2J');
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  }, 30_000);
});

describe('tokens with control characters', () => {
  const ctx = eachTest(['{"id":1}'], 'stored');

  it('from IDCLI_ACCESS_TOKEN: exit 2 with a message, nothing sent', async () => {
    for (const bad of [`${ctx.emu.mintTokens().access_token}\r`, 'abc\u0001def', 'abc\u0085def']) {
      const r = await list({ ...ctx.env, token: bad }, ['/v1/items']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/IDCLI_ACCESS_TOKEN holds characters no access token has/);
      expect(r.requests).toHaveLength(0);
      const t = await runCommand(['token'], { env: cliEnv({ ...ctx.env, token: bad }) });
      expect(t.code).toBe(2);
      expect(t.stdout).toBe('');
    }
  }, 30_000);

  it('from the store: exit 3 with a message, nothing sent', async () => {
    await new FileStore({ configDir: ctx.env.configDir }).write(
      { baseUrl: ctx.emu.baseUrl, clientId: ctx.emu.client.id, profile: 'default' },
      { version: 1, accessToken: 'abc\u001bdef', expiresAt: Date.now() + 600_000, updatedAt: 0, generation: 0 },
    );
    const r = await list(ctx.env, ['/v1/items']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/accessToken holds control characters/);
    expect(r.requests).toHaveLength(0);
    const t = await runCommand(['token'], { env: cliEnv(ctx.env) });
    expect(t.code).toBe(3);
    expect(t.stdout).toBe('');
  }, 30_000);
});

describe('what the user typed, echoed in errors', () => {
  const cli = (args: string[], extra: Record<string, string> = {}) => inTempConfig(args, extra);

  it('a number flag beyond 2^53 is told the largest number it takes', async () => {
    const limit = (flag: string, shown: string) =>
      `error: ${flag} must be a whole number no larger than 9007199254740991, not ${shown}\n`;
    for (const [flag, value, shown] of [
      ['--limit', '9007199254740992', '9007199254740992'],
      ['--page-index', '9007199254740993', '9007199254740993'],
      ['--page-size', '1'.repeat(400), `${'1'.repeat(199)}…`],
    ] as const) {
      const r = await cli(['list', flag, value, '/v1/items']);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(limit(flag, shown));
    }
    const max = await cli(['list', '--limit', '9007199254740991', '--base-url', 'x', '/v1/items']);
    expect(max.stderr).not.toMatch(/--limit/);
  }, 30_000);

  it('control characters in a setting are shown escaped in the error line, which stays one line', async () => {
    const r = await cli(['list', '/v1/items'], { IDCLI_HTTP_TIMEOUT: '1\r\u001b[2J\nx' });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "error: IDCLI_HTTP_TIMEOUT must be a positive number of seconds, not '1\\r\\u001b[2J\\nx'; " +
        'unset it for the default of 300 s\n',
    );
  }, 30_000);

  it('an argument of 128 KiB is cut to 200 characters in the one error line', async () => {
    const big = 'x'.repeat(131_000);
    const cases: [string[], Record<string, string>?][] = [
      [['list', '--limit', big, '/v1/items']],
      [[`--${big}`]],
      [[`-${big}`]],
      [[big]],
      [['config', big]],
      [['list', '/v1/items', big]],
      [['login', '--prompt', big]],
      [['completion', big]],
      [['config', 'set', big, '1']],
      [['config', 'set', 'client-id', big]],
      [['config', 'set', 'base-url', big]],
      [['--profile', big, 'status']],
      [['api', '-H', big, '/v1/items'], { IDCLI_BASE_URL: 'https://id.example.com' }],
      [['api', '-f', big, '/v1/items'], { IDCLI_BASE_URL: 'https://id.example.com' }],
      [['status'], { IDCLI_CREDENTIAL_STORE: big }],
      [['status'], { IDCLI_PROFILE: big }],
      [['status'], { IDCLI_CLIENT_ID: big }],
    ];
    for (const [args, env] of cases) {
      const r = await cli(args, env);
      const what = `${args.map((a) => a.slice(0, 12)).join(' ')} ${Object.keys(env ?? {}).join(' ')}`;
      expect(r.code, what).toBe(2);
      expect(r.stderr, what).toMatch(/^error: .*x…/);
      expect(
        r.stderr.split('\n').filter((l) => l !== ''),
        what,
      ).toHaveLength(1);
      expect(longest(r.stderr), what).toBeLessThan(600);
    }
  }, 120_000);
});

describe.each(['minted', 'stored'] as const)('secrets a server puts in its links (%s token)', (source) => {
  let token: string;
  const ITEMS = plainItems(250);

  const ctx = eachTest(ITEMS, source);
  beforeEach(async () => {
    if (ctx.env.token !== undefined) token = ctx.env.token;
    else {
      token = ctx.emu.mintTokens().access_token;
      await new FileStore({ configDir: ctx.env.configDir }).write(
        { baseUrl: ctx.emu.baseUrl, clientId: ctx.emu.client.id, profile: 'default' },
        { version: 1, accessToken: token, expiresAt: Date.now() + 600_000, updatedAt: 0, generation: 0 },
      );
    }
  });

  it('the error line and the resume hint hide the token in a path and signature and key parameters', async () => {
    const sig = 'SIGNATURE-value-0123456789';
    const query = `pageIndex=1&pageSize=100&sig=${sig}&X-Amz-Signature=${sig}&x-amz-credential=${sig}&API_KEY=${sig}&f=a+b`;
    const next = `${ctx.emu.baseUrl}/v1/items/${token}/more?${query}&t=${encodeURIComponent(token)}`;
    for (const verbose of [[], ['--verbose']]) {
      ctx.emu.inject({ path: '/v1/items', nth: 1, fault: { kind: 'next', href: next } });
      const r = await list(ctx.env, [...verbose, '--max-retries', '0', '--concurrency', '1', '/v1/items']);
      expect(r.code, r.stderr).toBe(4);
      expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 100)));
      // The page with the token in its path was asked for: the server's link was followed as it is.
      expect(r.requests.at(-1)).toContain(`/v1/items/${token}/more?`);
      expect(r.stderr).not.toContain(token);
      expect(r.stderr).not.toContain(sig);
      const shown = `${ctx.emu.baseUrl}/v1/items/[redacted]/more?pageIndex=1&pageSize=100&sig=[redacted]&X-Amz-Signature=[redacted]&x-amz-credential=[redacted]&API_KEY=[redacted]&f=a+b&t=[redacted]`;
      expect(r.stderr).toMatch(/^error: GET .*\/v1\/items\/\[redacted\]\/more\?.*sig=\[redacted\].* 404/m);
      expect(resumeUrl(r.stderr)).toBe(shown);
      expect(r.stderr).toContain(
        'idcli: [redacted] in that URL stands for the value of sig, the value of X-Amz-Signature, the value of ' +
          'x-amz-credential, the value of API_KEY, the access token (`idcli token` prints it), not shown here; put ' +
          'the values back to resume\n',
      );
    }
  }, 60_000);

  it('`api` hides the token in the target path and a key parameter in its error line', async () => {
    const key = 'APIKEY-value-0123456789';
    for (const verbose of [[], ['--verbose']]) {
      const r = await runCommand(['api', ...verbose, `/v1/nothing/${token}?key=${key}&x=1`], { env: cliEnv(ctx.env) });
      expect(r.code, r.stderr).toBe(4);
      expect(r.stderr).toContain('/v1/nothing/[redacted]?key=[redacted]&x=1');
      expect(r.stderr).not.toContain(token);
      expect(r.stderr).not.toContain(key);
    }
    // Refused before any token is read: only IDCLI_ACCESS_TOKEN is known by then, and it is hidden from the start.
    if (source === 'minted') {
      const r = await runCommand(['api', `http://other.example/${token}`], { env: cliEnv(ctx.env) });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('http://other.example/[redacted] resolves to');
      expect(r.stderr).not.toContain(token);
    }
  }, 60_000);

  it('the resume hint redacts the parameters --verbose redacts, and keeps every other byte', async () => {
    const secret = 'SECRET-in-a-link-0123456789';
    const next = `${ctx.emu.baseUrl}/v1/items?pageIndex=1&pageSize=100&access_token=${secret}&Code=${secret}&f=a+b%2Bc`;
    for (const verbose of [[], ['--verbose']]) {
      ctx.emu.inject({ path: '/v1/items', nth: 1, fault: { kind: 'next', href: next } });
      ctx.emu.inject({ path: '/v1/items', nth: 2, fault: { kind: 'status', status: 500 } });
      const r = await list(ctx.env, [...verbose, '--max-retries', '0', '--concurrency', '1', '/v1/items']);
      expect(r.code).toBe(4);
      expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 100)));
      expect(r.stderr).not.toContain(secret);
      expect(resumeUrl(r.stderr)).toBe(
        `${ctx.emu.baseUrl}/v1/items?pageIndex=1&pageSize=100&access_token=[redacted]&Code=[redacted]&f=a+b%2Bc`,
      );
      if (verbose.length) expect(r.stderr).toContain('access_token=[redacted]&Code=[redacted]');
    }
  }, 60_000);
});

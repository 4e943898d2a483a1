/**
 * `idcli api` and `idcli token --header` in process against the emulator's resource API, with a stored sign-in in the
 * file store. What needs a process (a terminal, a closed pipe, a real shell, signals) is in test/e2e/api.test.ts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Harness } from '../../support/harness.js';
import type { Clock } from '../../../src/clock.js';
import { FakeClock } from '../../support/clock.js';
import { until } from '../../support/until.js';
import { type CliOptions, type CliResult, EXE } from '../../support/cli.js';
import { SCHEMES, type Scheme } from '../../support/scheme.js';
import { storeSignIn } from '../../support/sign-in.js';
import { apiCalls, apiEnv, eachSignedInTest, fifo, ITEM } from '../../support/api.js';

let h: Harness;
/** Access tokens printed on purpose (by `token`), which the leak check allows. */
let printed: string[];

/** Registers, for every test of the calling suite, a signed-in harness over `scheme` with the item stored. */
function eachTest(scheme: Scheme = 'http'): void {
  eachSignedInTest(scheme, (harness, allowed) => {
    h = harness;
    printed = allowed;
  });
}

function api(
  args: string[],
  extra: Record<string, string | undefined> = {},
  opts: Pick<CliOptions, 'input' | 'timeoutMs'> & { clock?: Clock } = {},
): Promise<CliResult> {
  const env = { ...apiEnv(h.emu), ...extra };
  const { input, timeoutMs, clock } = opts;
  // The single executable (IDCLI_TEST_EXE) runs every command, on the machine's clock.
  if (EXE !== undefined) return h.run(['api', ...args], env, { input, timeoutMs });
  return h.command(['api', ...args], env, { ...(input !== undefined && { stdin: input }), ...(clock && { clock }) });
}

/** Requests the emulator saw outside /oauth/. */
function calls(path?: string) {
  return apiCalls(h.emu, path);
}

function refreshes(): number {
  return h.emu.tokenEvents.filter((e) => e.grant === 'refresh_token' && e.ok).length;
}

async function accessToken(): Promise<string> {
  return (await h.record())!.accessToken!;
}

describe.each(SCHEMES)('idcli api: the response, over %s', (scheme) => {
  eachTest(scheme);

  it('prints the body exactly as received: pretty-printed, an integer beyond 2^53, escapes', async () => {
    const r = await api(['users/42']);
    expect(r.code).toBe(0);
    expect(r.stdoutBytes.equals(Buffer.from(ITEM))).toBe(true);
    expect(r.stderr).toBe('');
    expect(calls()).toHaveLength(1);
    expect(calls()[0]).toMatchObject({ method: 'GET', path: '/v1/users/42' });
    expect(calls()[0]!.headers.accept).toBe('application/json');
  });

  it('-i prints the status line and the headers first, then the body', async () => {
    const r = await api(['-i', 'users/42']);
    expect(r.code).toBe(0);
    const [head, ...rest] = r.stdout.split('\r\n\r\n');
    const lines = head!.split('\r\n');
    expect(lines[0]).toBe('HTTP/1.1 200 OK');
    expect(lines).toContain('content-type: application/json; charset=utf-8');
    expect(lines).toContain(`content-length: ${Buffer.byteLength(ITEM)}`);
    expect(rest.join('\r\n\r\n')).toBe(ITEM);
  });

  it('DELETE answered 204: empty stdout, exit 0', async () => {
    const r = await api(['-X', 'DELETE', 'users/42']);
    expect(r.code).toBe(0);
    expect(r.stdoutBytes.length).toBe(0);
    expect(h.emu.resource('/v1/users/42')).toBeUndefined();
  });

  it('404: exit 4, the body on stdout, the status on stderr', async () => {
    const r = await api(['users/nobody']);
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: 'not_found' });
    expect(r.stderr).toMatch(/^error: GET https?:\/\/127\.0\.0\.1:\d+\/v1\/users\/nobody failed: HTTP 404 Not Found; /);
    expect(r.stderr.startsWith(`error: GET ${h.emu.baseUrl}/`)).toBe(true);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a redirect is not followed: exit 4, the reason on stderr, nothing sent to Location', async () => {
    const r = await api([`status/302?location=${encodeURIComponent(`${h.emu.baseUrl}/v1/echo`)}`]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('redirect (HTTP 302 Found)');
    expect(r.stderr).toContain('which idcli does not follow');
    expect(JSON.parse(r.stdout)).toEqual({ status: 302 });
    expect(calls().map((c) => c.path)).toEqual(['/v1/status/302']);
  });
});

describe('idcli api: the request', () => {
  eachTest();

  it('-f fields: a JSON object of strings, Content-Type application/json, POST by default', async () => {
    const r = await api(['echo', '-f', 'name=Ada', '--field', 'note=a=b', '-f', 'empty=']);
    expect(r.code).toBe(0);
    const echoed = JSON.parse(r.stdout) as { method: string; headers: Record<string, string>; body: string };
    expect(echoed.method).toBe('POST');
    expect(echoed.headers['content-type']).toBe('application/json');
    expect(echoed.body).toBe('{"name":"Ada","note":"a=b","empty":""}');
  });

  it('-X PATCH with -f updates an item; -H adds headers and may set the content type', async () => {
    const r = await api(['-X', 'PATCH', 'users/42', '-f', 'name=Grace', '-H', 'X-Request-Id: r1']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'Grace' });
    expect(calls()[0]!.headers['x-request-id']).toBe('r1');
    const e = await api(['-XPUT', 'echo', '--input', '-', '-H', 'Content-Type: text/plain'], {}, { input: 'plain' });
    expect(JSON.parse(e.stdout)).toMatchObject({
      method: 'PUT',
      body: 'plain',
      headers: { 'content-type': 'text/plain' },
    });
  });

  it('--input - sends stdin byte for byte with PUT; the item then holds exactly those bytes', async () => {
    const body = '{ "id" : 12345678901234567890123,\r\n\t"name":"Zoë", "esc":"\\u0041\\n" }  \n';
    const r = await api(['-X', 'PUT', 'users/42', '--input', '-'], {}, { input: body });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(body);
    expect(h.emu.resource('/v1/users/42')!.equals(Buffer.from(body))).toBe(true);
    expect(calls()[0]!.headers['content-type']).toBe('application/json');
  });

  it('--input file sends the file as is (POST when no -X)', async () => {
    const file = join(h.dir, 'body.bin');
    const bytes = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x31, 0x7d, 0x0a, 0xc3, 0xa9, 0x00, 0xff]);
    await writeFile(file, bytes);
    const r = await api(['echo', '--input', file]);
    expect(r.code).toBe(0);
    const echoed = JSON.parse(r.stdout) as { method: string; bodyBase64: string };
    expect(echoed.method).toBe('POST');
    expect(Buffer.from(echoed.bodyBase64, 'base64').equals(bytes)).toBe(true);
    const missing = await api(['echo', '--input', join(h.dir, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read --input');
  });

  it('refused before any request: -f with --input, another origin, an Authorization header of your own', async () => {
    const both = await api(['echo', '-f', 'a=1', '--input', '-'], {}, { input: '{}' });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('-f/--field and --input cannot be used together');
    const other = await api(['https://elsewhere.example.com/v1/users/42']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('is not the API origin');
    const auth = await api(['users/42', '-H', 'Authorization: Bearer mine']);
    expect(auth.code).toBe(2);
    expect(auth.stderr).toContain('Authorization header of your own is refused');
    expect(h.emu.requests).toHaveLength(0);
    for (const r of [both, other, auth]) expect(r.stdout).toBe('');
  });

  it('-X CONNECT and -X TRACE are refused: exit 2 at once, nothing sent', async () => {
    for (const method of ['CONNECT', 'connect', 'TRACE']) {
      const r = await api(['-X', method, 'users/42'], {}, { timeoutMs: 10_000 });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(
        /^error: -X\/--method (CONNECT|TRACE) is not supported: .*; use GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS\n$/,
      );
    }
    expect(h.emu.requests).toHaveLength(0);
  });

  it('IDCLI_ACCESS_TOKEN is sent as is, no store read', async () => {
    const t = h.emu.mintTokens().access_token;
    const r = await api(['users/42'], { IDCLI_ACCESS_TOKEN: t, IDCLI_CONFIG_DIR: join(h.dir, 'empty') });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ITEM);
    expect(calls()[0]!.bearer).toBe(t);
  });
});

describe.each(SCHEMES)('idcli api: retries and the token, over %s', (scheme) => {
  eachTest(scheme);

  it('a POST answered 503 is sent exactly once: exit 4, the body on stdout', async () => {
    const r = await api(['-X', 'POST', 'unavailable?retryAfter=0', '-f', 'a=1']);
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: 'unavailable' });
    expect(r.stderr).toContain('failed: HTTP 503 Service Unavailable');
    expect(calls()).toHaveLength(1);
    // PUT and DELETE are not retried either, although they are idempotent: the contract retries GET, HEAD, OPTIONS.
    h.emu.inject({ path: '/v1/users/42', fault: { kind: 'status', status: 503, retryAfter: '0' } });
    expect((await api(['-X', 'DELETE', 'users/42'])).code).toBe(4);
    expect(calls('/v1/users/42')).toHaveLength(1);
  });

  it('a GET answered 503 twice then 200 succeeds, waiting as Retry-After says', async () => {
    h.emu.inject({ path: '/v1/users/42', fault: { kind: 'status', status: 503, retryAfter: '1' } });
    h.emu.inject({ path: '/v1/users/42', fault: { kind: 'status', status: 503 } });
    const clock = EXE === undefined ? new FakeClock() : undefined;
    const running = api(['users/42', '--verbose'], {}, clock && { clock });
    // The waits between the attempts, told from the HTTP deadline (IDCLI_HTTP_TIMEOUT's 30 s) pending meanwhile.
    const retryWait = (ms: number) => ms < 30_000;
    const waited = clock && [
      await clock.elapseFirst(retryWait, 'the wait Retry-After asked for'),
      await clock.elapseFirst(retryWait, 'the backoff after the second 503'),
    ];
    const r = await running;
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ITEM);
    const seen = calls('/v1/users/42');
    expect(seen.map((c) => c.status)).toEqual([503, 503, 200]);
    const told = [...r.stderr.matchAll(/ in (\d+) ms/g)].map((m) => Number(m[1]));
    expect(told).toHaveLength(2);
    expect(told[0]).toBeGreaterThanOrEqual(1000);
    if (waited) expect(told).toEqual(waited);
    expect(r.stderr).toContain('retry 1 of 5');
  });

  it('--max-retries bounds the GET retries: exit 4 after them, naming the count', async () => {
    const clock = EXE === undefined ? new FakeClock() : undefined;
    const running = api(['unavailable', '--max-retries', '2'], {}, clock && { clock });
    // The backoffs let pass on the run's clock; the HTTP deadline (IDCLI_HTTP_TIMEOUT's 30 s) pending meanwhile not.
    const started = clock?.now();
    const r = clock ? await clock.runUntilSettled(running, 'the retries', (ms) => ms < 30_000) : await running;
    if (clock) expect(clock.now()).toBeGreaterThan(started!);
    expect(r.code).toBe(4);
    expect(calls()).toHaveLength(3);
    expect(r.stderr).toContain('HTTP 503 Service Unavailable after 2 retries');
  });

  it('a 401: one refresh, then the request once more, even a POST', async () => {
    h.emu.inject({ path: '/v1/echo', fault: { kind: 'status', status: 401 } });
    const r = await api(['echo', '-f', 'a=1']);
    expect(r.code).toBe(0);
    expect(refreshes()).toBe(1);
    const seen = calls('/v1/echo');
    expect(seen.map((c) => [c.method, c.status])).toEqual([
      ['POST', 401],
      ['POST', 200],
    ]);
    expect(seen[1]!.bearer).not.toBe(seen[0]!.bearer);
    expect(JSON.parse(r.stdout)).toMatchObject({ body: '{"a":"1"}' });
  });

  it('a 401 that remains after the refresh: exit 3, the body on stdout, no third try', async () => {
    h.emu.inject({ path: '/v1/users/42', times: 2, fault: { kind: 'status', status: 401 } });
    const r = await api(['-X', 'PATCH', 'users/42', '-f', 'a=1']);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: 'injected_fault' });
    expect(r.stderr).toContain('rejected (HTTP 401 Unauthorized) even after a refresh');
    expect(calls()).toHaveLength(2);
    expect(refreshes()).toBe(1);
  });

  it('refreshes first when the token is about to expire', async () => {
    await storeSignIn({ emu: h.emu, configDir: join(h.dir, 'config'), ttlSec: 20 });
    const r = await api(['users/42']);
    expect(r.code).toBe(0);
    expect(refreshes()).toBe(1);
    expect(calls().map((c) => c.status)).toEqual([200]);
  });

  it('--verbose traces the request with every secret redacted', async () => {
    const r = await api(['-X', 'PATCH', 'users/42', '-f', 'name=Grace', '--verbose']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`* PATCH ${h.emu.baseUrl}/v1/users/42 -> 200 (`);
    expect(r.stderr).toContain('authorization (values not shown), a 16-byte body');
    expect(r.stderr).not.toContain(await accessToken());
  });
});

describe('idcli api --input: streamed, and every wait can be ended', () => {
  eachTest();

  const MiB = 1024 * 1024;
  const LINUX = process.platform === 'linux';

  /** Whether the run has `path` open: this process, or under IDCLI_TEST_EXE any (only the run opens the test's FIFO). */
  async function holds(path: string): Promise<boolean> {
    const pids = EXE === undefined ? ['self'] : (await readdir('/proc')).filter((d) => /^\d+$/.test(d));
    for (const pid of pids) {
      const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
      const targets = await Promise.all(fds.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
      if (targets.includes(path)) return true;
    }
    return false;
  }

  /** Starts `idcli api args` (in process unless IDCLI_TEST_EXE) and waits until it has the FIFO open, reading from it. */
  async function readingFifo(
    path: string,
    args: string[],
    extra: Record<string, string | undefined> = {},
    clock?: FakeClock,
  ) {
    const running = api(args, extra, clock ? { clock } : {});
    await until(async () => ((await holds(path)) ? true : undefined), 20_000, 'the FIFO opened');
    return { running };
  }

  it.runIf(LINUX)('a FIFO nobody writes to: IDCLI_HTTP_TIMEOUT ends the wait (exit 4), nothing sent', async () => {
    const path = await fifo(h.dir);
    // The executable runs on the machine's clock, where the deadline passes by itself.
    const clock = EXE === undefined ? new FakeClock() : undefined;
    const started = clock?.now();
    const { running } = await readingFifo(
      path,
      ['-X', 'POST', 'upload', '--input', path],
      {
        IDCLI_HTTP_TIMEOUT: '1',
      },
      clock,
    );
    // The wait ends at the run's own deadline, not at the 30 s a default timeout would wait.
    await clock?.elapse(1000, 'the deadline of IDCLI_HTTP_TIMEOUT');
    const r = await running;
    if (clock) expect(clock.now() - started!).toBe(1000);
    expect(r.code).toBe(4);
    expect(r.stderr).toBe(
      `error: the request body from --input ${path} did not arrive within 1 s (IDCLI_HTTP_TIMEOUT); check that something writes it and closes it, or raise IDCLI_HTTP_TIMEOUT\n`,
    );
    expect(calls()).toHaveLength(0);
  });

  it.runIf(LINUX)('a FIFO written to: the body is kept and sent again whole after a 401', async () => {
    const path = await fifo(h.dir);
    h.emu.inject({ path: '/v1/echo', fault: { kind: 'status', status: 401 } });
    const { running } = await readingFifo(path, ['echo', '--input', path]);
    await writeFile(path, '{"from":"a fifo"}');
    const r = await running;
    expect(r.code).toBe(0);
    expect(calls('/v1/echo').map((c) => c.status)).toEqual([401, 200]);
    expect(JSON.parse(r.stdout)).toMatchObject({ method: 'POST', body: '{"from":"a fifo"}' });
    expect(calls('/v1/echo')[1]!.headers['content-length']).toBe('17');
  });

  it('a file is read again for a retry and for the repeat after a 401; stdin within the cap is kept for it', async () => {
    const file = join(h.dir, 'body.json');
    await writeFile(file, '{"from":"a file"}');
    h.emu.inject({ path: '/v1/echo', fault: { kind: 'status', status: 503, retryAfter: '0' } });
    const get = await api(['-X', 'GET', 'echo', '--input', file]);
    expect(get.code).toBe(0);
    expect(JSON.parse(get.stdout)).toMatchObject({ method: 'GET', body: '{"from":"a file"}' });
    h.emu.inject({ path: '/v1/echo', fault: { kind: 'status', status: 401 } });
    const post = await api(['echo', '--input', file]);
    expect(post.code).toBe(0);
    expect(JSON.parse(post.stdout)).toMatchObject({ method: 'POST', body: '{"from":"a file"}' });
    h.emu.inject({ path: '/v1/echo', fault: { kind: 'status', status: 401 } });
    const piped = await api(['echo', '--input', '-'], {}, { input: '{"from":"stdin"}' });
    expect(piped.code).toBe(0);
    expect(JSON.parse(piped.stdout)).toMatchObject({ body: '{"from":"stdin"}' });
    expect(calls('/v1/echo').map((c) => c.status)).toEqual([503, 200, 401, 200, 401, 200]);
    expect(refreshes()).toBe(2);
  });

  it('stdin over the cap goes out once: a 401 refreshes the token but does not repeat it (exit 3)', async () => {
    h.emu.inject({ path: '/v1/upload', fault: { kind: 'status', status: 401 } });
    const r = await api(['-X', 'POST', 'upload', '--input', '-'], {}, { input: '\0'.repeat(70 * MiB) });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: 'injected_fault' });
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('stdin is over 64 MB: it is sent as it is read, and the request is not repeated');
    expect(lines[1]).toMatch(
      /^error: POST http:\/\/127\.0\.0\.1:\d+\/v1\/upload: the access token was rejected \(HTTP 401 Unauthorized\), and the request was not repeated: its body from stdin was sent as it was read and cannot be sent again; the token is refreshed now; run the command again$/,
    );
    expect(calls('/v1/upload')).toHaveLength(1);
    expect(refreshes()).toBe(1);
  }, 60_000);
});

describe('the token stays out of every command line', () => {
  eachTest();

  /** Every process's arguments on this machine that contain `needle`, as far as /proc lets us read them. */
  async function cmdlinesWith(needle: string): Promise<string[]> {
    const found: string[] = [];
    for (const pid of (await readdir('/proc')).filter((d) => /^\d+$/.test(d))) {
      const text = await readFile(`/proc/${pid}/cmdline`).then(
        (b) => b.toString('utf8'),
        () => '',
      );
      if (text.includes(needle)) found.push(pid);
    }
    return found;
  }

  it.runIf(process.platform === 'linux')(
    'while idcli api waits for the answer, no /proc/<pid>/cmdline holds the token',
    async () => {
      const token = await accessToken();
      // The scan itself works: a process with a marker in its arguments is found.
      const marker = `marker-${Date.now()}-${process.pid}`;
      const control: ChildProcess = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)', marker]);
      try {
        await until(async () => ((await cmdlinesWith(marker)).length > 0 ? true : undefined), 10_000, 'the control');
      } finally {
        control.kill();
      }
      // The request is held at the server until the scan is done: the run is mid-request all through it.
      let release!: () => void;
      h.emu.inject({ path: '/v1/users/42', fault: { kind: 'hold', until: new Promise<void>((r) => (release = r)) } });
      const running = api(['users/42']);
      try {
        await until(() => (calls('/v1/users/42').length > 0 ? true : undefined), 20_000, 'the held request');
        expect(await cmdlinesWith(token)).toEqual([]);
      } finally {
        release();
      }
      const r = await running;
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(ITEM);
      expect(calls('/v1/users/42')[0]!.bearer).toBe(token);
    },
  );
});

describe('idcli token --header', () => {
  eachTest();

  it('prints exactly "Authorization: Bearer <token>" and a newline', async () => {
    const token = await accessToken();
    printed.push(token);
    const r = await h.command(['token', '--header']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Authorization: Bearer ${token}\n`);
    expect(r.stderr).toBe('');
    const t = h.emu.mintTokens().access_token;
    printed.push(t);
    expect((await h.command(['token', '--header'], { IDCLI_ACCESS_TOKEN: t })).stdout).toBe(
      `Authorization: Bearer ${t}\n`,
    );
  });

  it('--header with --json is a usage error', async () => {
    const r = await h.command(['token', '--header', '--json']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('--json and --header cannot be used together');
  });
});

/**
 * Servers that answer too slowly, forever, or with something that is not HTTP: every exchange ends within
 * IDCLI_HTTP_TIMEOUT (a short one here, so a test that hangs is a failure, not a slow pass), interim responses are
 * capped, a status outside 100–599 is a protocol error, and what cannot succeed is asked once. Each server is a
 * raw node:net socket so it can break HTTP in ways an HTTP server library would refuse to.
 *
 * The cases run on both transports: node:http (no proxy variable) and undici (a proxy variable set, with NO_PROXY
 * sending loopback direct), and once more through a real forward proxy.
 *
 * Each command runs in process on a fake clock (test/support/clock.ts) that the servers move: a server "sending a
 * byte a second" moves the run's clock a second with each byte it sends, so what a test asserts about time is the
 * clock's, and a deadline falls due without being waited for.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/file-store.js';
import { baseEnv, type CliResult, tempDir } from '../support/cli.js';
import { FakeClock } from '../support/clock.js';
import { runCommand } from '../support/run-command.js';
import { STACK_FRAME, startForwardProxy } from '../support/proxy.js';

const TOKEN = 'token-1234567890';
const CLIENT_ID = '0b6f5c1e-8f0a-4c39-9d2e-3f1a2b4c5d6e';
/** Seconds: short enough for fast tests, long enough for loopback to answer a healthy request many times over. */
const DEADLINE = 2;
const DEADLINE_MS = DEADLINE * 1000;

interface Hostile {
  url: string;
  /** Request heads received, over all connections. */
  readonly requests: number;
  close(): Promise<void>;
}

/** Each request is answered by `answer`, on the raw socket; intervals it starts end when the socket closes. */
async function hostile(answer: (socket: Socket, n: number) => void): Promise<Hostile> {
  let requests = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let seen = '';
    socket.on('data', (chunk: Buffer) => {
      seen += chunk.toString('latin1');
      // One answer per request: its head, then as many bytes of body (the token form) as it declares.
      for (let end = seen.indexOf('\r\n\r\n'); end >= 0; end = seen.indexOf('\r\n\r\n')) {
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(seen.slice(0, end))?.[1] ?? 0);
        if (seen.length < end + 4 + length) return;
        seen = seen.slice(end + 4 + length);
        requests++;
        answer(socket, requests);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** The clock of each test's runs. */
let clock: FakeClock;
/** The real time between a server's writes: short, since the run's clock, not the machine's, says how slow they are. */
const TICK_MS = 10;

/**
 * Moves the run's clock on by `ms`, as long as a request's deadline of `deadlineMs` is pending: a server's pace is
 * the run's time while an attempt lasts, and the clock stops where the attempt ended.
 */
function pace(ms: number, deadlineMs: number): void {
  if (clock.pending().includes(deadlineMs)) clock.advance(ms);
}

/** Writes `text` one byte every `ms` of the run's clock until the socket closes. */
function dribble(socket: Socket, text: string, ms = 1000, deadlineMs = DEADLINE_MS): void {
  let i = 0;
  const timer = setInterval(() => {
    if (i >= text.length || socket.destroyed) return clearInterval(timer);
    socket.write(text[i++]!);
    pace(ms, deadlineMs);
  }, TICK_MS);
  socket.on('close', () => clearInterval(timer));
}

/** Calls `write` every `ms` of the run's clock (every tick if not given) until the socket closes. */
function every(socket: Socket, write: () => void, ms?: number): void {
  const timer = setInterval(() => {
    if (socket.destroyed) return clearInterval(timer);
    write();
    if (ms !== undefined) pace(ms, DEADLINE_MS);
  }, TICK_MS);
  socket.on('close', () => clearInterval(timer));
}

const PAGE = JSON.stringify({ items: [{ n: 1 }], links: { self: '/v1/items', first: '/v1/items' } });
const head = (status: string, body: string) =>
  `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`;
const whole = (status: string, body = PAGE) => head(status, body) + body;
const HINT = 'HTTP/1.1 103 Early Hints\r\nlink: </style.css>; rel=preload\r\n\r\n';
const CHUNKED = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n';

const TRANSPORTS = {
  'node:http': {},
  // A proxy variable selects the undici transport; NO_PROXY sends loopback direct through it.
  undici: { HTTP_PROXY: 'http://127.0.0.1:9', NO_PROXY: '127.0.0.1' },
} as const;

let servers: Hostile[] = [];
const dirs: { cleanup: () => Promise<void> }[] = [];

beforeEach(() => {
  clock = new FakeClock();
});

afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await Promise.all(dirs.splice(0).map((d) => d.cleanup()));
  servers = [];
});

async function serve(answer: (socket: Socket, n: number) => void): Promise<Hostile> {
  const s = await hostile(answer);
  servers.push(s);
  return s;
}

/** How a test moves the run's clock besides the servers' pace, while the command runs. */
type Drive = () => Promise<void>;

/** A command in process, in a config directory of its own; `elapsedMs` is the time that passed on its clock. */
async function idcli(
  args: string[],
  extra: Record<string, string | undefined>,
  drive?: Drive,
): Promise<CliResult & { elapsedMs: number }> {
  const dir = await tempDir();
  dirs.push(dir);
  const started = clock.now();
  const [r] = await Promise.all([
    runCommand(args, { env: baseEnv({ IDCLI_HTTP_TIMEOUT: String(DEADLINE), ...extra }), configDir: dir.path, clock }),
    drive?.(),
  ]);
  return { ...r, elapsedMs: clock.now() - started };
}

function list(s: Hostile, extra: Record<string, string | undefined>, args: string[] = [], drive?: Drive) {
  return idcli(
    ['list', '/v1/items', ...args],
    { IDCLI_API_BASE_URL: s.url, IDCLI_ACCESS_TOKEN: TOKEN, ...extra },
    drive,
  );
}

function api(s: Hostile, extra: Record<string, string | undefined>) {
  return idcli(['api', '/v1/things'], { IDCLI_API_BASE_URL: s.url, IDCLI_ACCESS_TOKEN: TOKEN, ...extra });
}

/** Exit 4, one line on stderr, no stack trace. */
function expectNetworkFailure(r: CliResult, message: RegExp): void {
  expect(r.signal).toBeNull();
  expect(r.code).toBe(4);
  expect(r.stderr).toMatch(message);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).not.toMatch(STACK_FRAME);
}

function expectDeadline(r: CliResult & { elapsedMs: number }): void {
  expectNetworkFailure(
    r,
    new RegExp(
      `no complete response within ${DEADLINE} s \\(IDCLI_HTTP_TIMEOUT; raise it if the server is only slow\\)`,
    ),
  );
  // Ended when the deadline fell due: not before it, and not by the 30 s idle timeout after it.
  expect(r.elapsedMs).toBe(DEADLINE_MS);
}

for (const [name, transport] of Object.entries(TRANSPORTS)) {
  describe(`hostile servers, ${name} transport`, () => {
    it('list: a head sent one byte a second is ended by the deadline, and not retried', async () => {
      const s = await serve((socket) => dribble(socket, whole('200 OK')));
      const r = await list(s, transport);
      expectDeadline(r);
      expect(s.requests).toBe(1);
    });

    it('list: a body sent one byte a second is ended by the deadline', async () => {
      const s = await serve((socket) => {
        socket.write(head('200 OK', PAGE));
        dribble(socket, PAGE);
      });
      const r = await list(s, transport);
      expectDeadline(r);
      expect(s.requests).toBe(1);
      expect(r.stdout).toBe('');
    });

    it('list: endless 103 Early Hints are cut off after 10, a protocol error asked once', async () => {
      const s = await serve((socket) => every(socket, () => socket.write(HINT)));
      const r = await list(s, { ...transport, IDCLI_HTTP_TIMEOUT: '30' });
      expectNetworkFailure(r, /invalid HTTP response \(more than 10 interim responses\)/);
      // The cap ended it, not a timer: no time passed on the run's clock.
      expect(r.elapsedMs).toBe(0);
      expect(s.requests).toBe(1);
    });

    it('list: slow interim responses count against the deadline', async () => {
      // Fewer than the cap arrive before the deadline, and each one restarts the idle timer. Were the deadline
      // restarted too, the run would go on past it to the cap.
      const s = await serve((socket) => every(socket, () => socket.write(HINT), 500));
      const r = await list(s, transport);
      expectDeadline(r);
      expect(s.requests).toBe(1);
    });

    for (const status of ['099 Too Low', '000 Zero', '600 Too High', '999 Nine']) {
      it(`list: status ${status.slice(0, 3)} is a protocol error, never an interim response, asked once`, async () => {
        // A final 200 behind it would be taken as the answer if the status were taken for an interim one.
        const s = await serve((socket) => socket.write(`${whole(status)}${whole('200 OK')}`));
        const r = await list(s, transport);
        expectNetworkFailure(r, new RegExp(`invalid HTTP response \\(status ${status.slice(0, 3)}\\)`));
        expect(s.requests).toBe(1);
        expect(r.stdout).toBe('');
      });
    }

    it('list: a malformed head is a protocol error, asked once', async () => {
      const s = await serve((socket) => socket.end('HTTP/1.1 2x0 OK\r\ncontent-length: 2\r\n\r\n{}'));
      const r = await list(s, transport);
      expectNetworkFailure(r, /invalid HTTP response/);
      expect(s.requests).toBe(1);
    });

    it('list: a declared length over the size limit is refused unread, asked once', async () => {
      const s = await serve((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 314572800\r\n\r\n{'));
      const r = await list(s, transport);
      expectNetworkFailure(r, /response too large \(314572800 bytes\)/);
      expect(s.requests).toBe(1);
    });

    it('list: a connection reset is still retried', async () => {
      const s = await serve((socket, n) => (n <= 2 ? socket.destroy() : socket.write(whole('200 OK'))));
      // The backoff waits before the two retries, told from the request deadline pending meanwhile.
      const r = await list(s, transport, ['--max-retries', '3'], async () => {
        for (const retry of [1, 2]) await clock.elapseFirst((ms) => ms < DEADLINE_MS, `the wait before retry ${retry}`);
      });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('{"n":1}\n');
      expect(s.requests).toBe(3);
    });

    it('list: an endless page sent fast ends at the size limit, after one request', async () => {
      const chunk = 'x'.repeat(64 * 1024);
      const frame = `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
      const s = await serve((socket) => {
        socket.write(CHUNKED);
        const pump = (): void => {
          while (!socket.destroyed && socket.write(frame));
        };
        socket.on('drain', pump);
        pump();
      });
      const r = await list(s, { ...transport, IDCLI_HTTP_TIMEOUT: '60' });
      expectNetworkFailure(r, /response too large/);
      expect(r.elapsedMs).toBe(0);
      expect(s.requests).toBe(1);
    });

    it('list: an endless page sent slowly ends at the deadline, after one request', async () => {
      const s = await serve((socket) => {
        socket.write(CHUNKED);
        every(socket, () => socket.write('10\r\n{"items":[{},{},\r\n'), 100);
      });
      const r = await list(s, transport);
      expectDeadline(r);
      expect(s.requests).toBe(1);
    });

    it('list: a deadline that runs out mid-walk keeps the pages already written and gives the resume command', async () => {
      const first = JSON.stringify({
        items: [{ n: 1 }],
        links: { self: '/v1/items', first: '/v1/items', next: '/v1/items?cursor=two' },
      });
      const s = await serve((socket, n) => {
        if (n === 1) socket.write(whole('200 OK', first));
        else dribble(socket, whole('200 OK'));
      });
      const r = await list(s, transport);
      expect(r.code).toBe(4);
      expect(r.stdout).toBe('{"n":1}\n');
      expect(r.stderr).toMatch(/within 2 s \(IDCLI_HTTP_TIMEOUT; raise it/);
      expect(r.stderr).toMatch(/cursor=two/);
      expect(r.stderr).not.toMatch(STACK_FRAME);
      expect(s.requests).toBe(2);
    });

    it('api: a body sent one byte a second is ended by the deadline, and not retried', async () => {
      const s = await serve((socket) => {
        socket.write(head('200 OK', PAGE));
        dribble(socket, PAGE);
      });
      const r = await api(s, transport);
      expectDeadline(r);
      expect(s.requests).toBe(1);
    });

    it('api: status 600 is a protocol error, asked once', async () => {
      const s = await serve((socket) => socket.write(whole('600 Nope')));
      const r = await api(s, transport);
      expectNetworkFailure(r, /invalid HTTP response \(status 600\)/);
      expect(s.requests).toBe(1);
    });

    it('token --refresh: a token endpoint that answers one byte a second is ended by the deadline', async () => {
      const s = await serve((socket) => dribble(socket, whole('200 OK', '{}')));
      const dir = await tempDir();
      dirs.push(dir);
      // Written on the run's clock, before the run: a record newer than the run's start is one a refresh wrote.
      const now = clock.now();
      await new FileStore({ configDir: dir.path }).write(
        { baseUrl: s.url, clientId: CLIENT_ID, profile: 'default' },
        {
          version: 1,
          refreshToken: 'refresh-1234567890',
          codeVerifier: 'v'.repeat(43),
          accessToken: TOKEN,
          tokenType: 'Bearer',
          expiresAt: now + 3600_000,
          scope: 'openid',
          updatedAt: now,
          generation: 0,
        },
      );
      const started = clock.now();
      const r = await runCommand(['token', '--refresh'], {
        env: baseEnv({
          ...transport,
          IDCLI_CREDENTIAL_STORE: 'file',
          IDCLI_BASE_URL: s.url,
          IDCLI_CLIENT_ID: CLIENT_ID,
          IDCLI_HTTP_TIMEOUT: String(DEADLINE),
        }),
        configDir: dir.path,
        clock,
      });
      expectDeadline({ ...r, elapsedMs: clock.now() - started });
      expect(r.stdout).toBe('');
      expect(s.requests).toBe(1);
    });
  });
}

describe('IDCLI_HTTP_TIMEOUT', () => {
  for (const value of ['0', '-5', 'soon', '1e3', '5s']) {
    it(`'${value}' is refused with exit 2, naming the variable, before any request`, async () => {
      const s = await serve((socket) => socket.write(whole('200 OK')));
      const r = await list(s, { IDCLI_HTTP_TIMEOUT: value });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/IDCLI_HTTP_TIMEOUT must be a positive number of seconds/);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(s.requests).toBe(0);
    });
  }

  it('a fraction of a second is a deadline too', async () => {
    const s = await serve((socket) => dribble(socket, whole('200 OK'), 100, 500));
    const r = await list(s, { IDCLI_HTTP_TIMEOUT: '0.5' });
    expectNetworkFailure(r, /no complete response within 0\.5 s \(IDCLI_HTTP_TIMEOUT; raise it/);
    expect(r.elapsedMs).toBe(500);
  });
});

describe('through a forward proxy', () => {
  it('list: a body the origin sends one byte a second is ended by the deadline', async () => {
    const proxy = await startForwardProxy();
    try {
      const s = await serve((socket) => {
        socket.write(head('200 OK', PAGE));
        dribble(socket, PAGE);
      });
      const r = await list(s, { HTTP_PROXY: proxy.url });
      expectDeadline(r);
      expect(proxy.hits.map((h) => h.target)).toEqual([`${s.url}/v1/items?pageSize=1000`]);
      expect(s.requests).toBe(1);
    } finally {
      await proxy.close();
    }
  });
});

/**
 * The access token never travels to another origin, whatever the target looks like: every spelling that the WHATWG
 * URL parser reads as scheme-relative (`//host`, backslashes, tabs, leading blanks, extra slashes), each run in
 * process, for `list`, `list --count`, `list --concurrency` and `api`, against a foreign server that records every
 * connection and every byte it is sent.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectNoSecrets, type Harness, harness } from '../../support/harness.js';
import { storeSignIn } from '../../support/sign-in.js';

/** A TCP server that answers nothing and keeps what arrives, so that even a TLS hello would be seen. */
interface Foreign {
  port: number;
  received(): string;
  connections: number;
  close(): Promise<void>;
}

async function foreignServer(): Promise<Foreign> {
  const chunks: Buffer[] = [];
  const sockets = new Set<Socket>();
  const foreign = { connections: 0 } as Foreign;
  const server: Server = createServer((socket) => {
    foreign.connections += 1;
    sockets.add(socket);
    socket.on('data', (b: Buffer) => chunks.push(b));
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  foreign.port = (server.address() as { port: number }).port;
  foreign.received = () => Buffer.concat(chunks).toString('latin1');
  foreign.close = () =>
    new Promise((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return foreign;
}

/** The spellings of "that other host" a user, a script or a hostile document might pass as a path. */
function variants(host: string): string[] {
  return [
    `//${host}/m/ok`,
    `\\\\${host}\\m\\ok`,
    `/\\${host}/m/ok`,
    `\\/${host}/m/ok`,
    `/\t/${host}/m/ok`,
    `/\n/${host}/m/ok`,
    `\t//${host}/m/ok`,
    ` //${host}/m/ok`,
    `///${host}/m/ok`,
    `////${host}/m/ok`,
    `\\\\\\${host}/m/ok`,
    `//user@${host}/m/ok`,
    `//${host}/m/ok?pageSize=5`,
    `http://${host}/m/ok`,
    `HTTP://${host}/m/ok`,
  ];
}

const COMMANDS: { name: string; args: (target: string) => string[] }[] = [
  { name: 'api', args: (t) => ['api', t] },
  { name: 'api -X POST -f a=b', args: (t) => ['api', '-X', 'POST', '-f', 'a=b', t] },
  { name: 'list', args: (t) => ['list', t] },
  { name: 'list --count', args: (t) => ['list', '--count', t] },
  { name: 'list --concurrency 4', args: (t) => ['list', '--concurrency', '4', t] },
];

let foreign: Foreign;
let h: Harness;

beforeAll(async () => {
  foreign = await foreignServer();
});
afterAll(async () => {
  await foreign.close();
});
beforeEach(async () => {
  h = await harness();
  await storeSignIn({ emu: h.emu, configDir: join(h.dir, 'config'), ttlSec: 3600 });
});
afterEach(async () => {
  expectNoSecrets(h);
  await h.close();
});

/** Runs every variant of every command, a few at a time, and returns the failures as readable lines. */
async function runAll(apiBaseUrl: string): Promise<string[]> {
  const host = `127.0.0.1:${foreign.port}`;
  const cases = COMMANDS.flatMap((c) => variants(host).map((v) => ({ c, v })));
  const wrong: string[] = [];
  for (let i = 0; i < cases.length; i += 4) {
    await Promise.all(
      cases.slice(i, i + 4).map(async ({ c, v }) => {
        const r = await h.command(c.args(v), { IDCLI_API_BASE_URL: apiBaseUrl });
        if (r.code !== 2 || !/not the API origin/.test(r.stderr) || r.stdout !== '') {
          wrong.push(`${c.name} ${JSON.stringify(v)}: exit ${r.code}, stderr ${JSON.stringify(r.stderr)}`);
        }
      }),
    );
  }
  return wrong;
}

describe('a target on another origin is refused before any request (exit 2)', () => {
  it('with an http api-base-url', async () => {
    const wrong = await runAll(`${h.emu.baseUrl}/v1`);
    expect(wrong).toEqual([]);
    expect(foreign.connections).toBe(0);
    expect(foreign.received()).not.toMatch(/authorization/i);
    // Nothing reached the API either: no request was made at all.
    expect(h.emu.requests.filter((r) => !r.path.startsWith('/oauth/'))).toEqual([]);
  });

  it('with an https api-base-url', async () => {
    const wrong = await runAll('https://127.0.0.1:1/v1');
    expect(wrong).toEqual([]);
    expect(foreign.connections).toBe(0);
  });

  it('the guard is not a false alarm: a path on the API origin goes through', async () => {
    h.emu.setResource('/v1/users/42', '{"id":42}');
    const r = await h.command(['api', '/v1/users/42'], { IDCLI_API_BASE_URL: `${h.emu.baseUrl}/v1` });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('{"id":42}');
  });
});

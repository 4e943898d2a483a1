/**
 * `api -i` shows the head as the server sent it: the reason phrase and the header names in their own case and order,
 * repeated fields as repeated lines. Against a loopback server that writes its answer byte for byte, the command run
 * in process.
 */
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { baseEnv, tempDir } from '../../support/cli.js';
import { runCommand } from '../../support/run-command.js';

const HEAD =
  'HTTP/1.1 201 Made It Here\r\n' +
  'X-Request-ID: Abc-1\r\n' +
  'Content-Type: application/json\r\n' +
  'set-cookie: a=1\r\n' +
  'Set-Cookie: b=2\r\n' +
  'ETag: "v1"\r\n' +
  'Content-Length: 2\r\n' +
  'Connection: close\r\n' +
  '\r\n';

let server: Server;
let base: string;
let dir: { path: string; cleanup: () => Promise<void> };

beforeEach(async () => {
  dir = await tempDir();
  server = createServer((socket) => {
    let got = '';
    socket.on('data', (chunk: Buffer) => {
      got += chunk.toString('latin1');
      if (got.includes('\r\n\r\n')) socket.end(`${HEAD}{}`);
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await dir.cleanup();
});

describe('idcli api -i', () => {
  it('prints the status line and the header fields as received, then the body', async () => {
    const r = await runCommand(['api', '-i', '/v1/x'], {
      env: baseEnv({ IDCLI_API_BASE_URL: base, IDCLI_CONFIG_DIR: dir.path, IDCLI_ACCESS_TOKEN: 'token-1234567890' }),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${HEAD}{}`);
  });
});

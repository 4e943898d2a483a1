/**
 * Answers at the edge of HTTP, each command run in process: bytes after a complete gzip member (refused clearly, once),
 * zero padding after it (allowed, as zlib allows it), and a redirect to a URL without an origin (file:), named.
 */
import { createServer, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { cliEnv, eachTest } from '../support/list.js';
import { runCommand } from '../support/run-command.js';
import { STACK_FRAME } from '../support/proxy.js';

const ctx = eachTest([]);

const PAGE = '{"items":[{"id":"a1"},{"id":"a2"}],"links":{"self":{"href":"/v1/items"},"first":{"href":"/v1/items"}}}';

/** A server whose every answer is 200 with `body` as its gzip body, framed by Content-Length; counts requests. */
async function gzipServer(body: Buffer): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests++;
    req.resume();
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      'content-length': String(body.length),
    });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

let closing: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closing?.();
  closing = undefined;
});

describe('bytes after a complete gzip member', () => {
  it.each([
    ['text', Buffer.from('\n<!-- served by x -->\n')],
    // A member of a compression method gzip does not define (CM 7): not a gzip member.
    ['a member in another method', Buffer.from([0x1f, 0x8b, 0x07, 0, 0, 0, 0, 0, 0, 0xff, 0xde, 0xad])],
  ])(
    'followed by %s: exit 4 saying so, asked once, for list and api',
    async (_, tail) => {
      const s = await gzipServer(Buffer.concat([gzipSync(PAGE), tail]));
      closing = s.close;
      const run = (args: string[]) => runCommand(args, { env: cliEnv(ctx.env, { IDCLI_BASE_URL: s.url }) });
      for (const args of [
        ['list', '/v1/items'],
        ['api', '/v1/items'],
      ]) {
        const before = s.requests();
        const r = await run(args);
        expect(r.code, r.stderr).toBe(4);
        expect(r.stdout).toBe('');
        expect(r.stderr).toMatch(
          /^error: GET http:\/\/127\.0\.0\.1:\d+\/v1\/items failed: the response body could not be decoded \(bytes after its gzip data are not a gzip member\)\n$/,
        );
        expect(r.stderr).not.toMatch(STACK_FRAME);
        expect(s.requests() - before).toBe(1);
      }
    },
    60_000,
  );

  it('followed by zero bytes (padding) or by another member: the body, as one', async () => {
    for (const wire of [
      Buffer.concat([gzipSync(PAGE), Buffer.alloc(64)]),
      Buffer.concat([gzipSync(PAGE.slice(0, 20)), gzipSync(PAGE.slice(20))]),
    ]) {
      const s = await gzipServer(wire);
      closing = s.close;
      const r = await runCommand(['list', '/v1/items'], { env: cliEnv(ctx.env, { IDCLI_BASE_URL: s.url }) });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('{"id":"a1"}\n{"id":"a2"}\n');
      await s.close();
      closing = undefined;
    }
  }, 60_000);
});

describe('a redirect to a URL without an origin', () => {
  it('names the target (redacted), not "null": exit 4, nothing fetched there', async () => {
    ctx.emu.setResource('/v1/doc', '{}');
    ctx.emu.inject({
      path: '/v1/doc',
      fault: {
        kind: 'status',
        status: 302,
        headers: { location: 'file:///etc/passwd?access_token=s3cr3t-t0ken-value&x=1' },
      },
    });
    const r = await runCommand(['api', '/v1/doc'], { env: cliEnv(ctx.env) });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(
      'redirect (HTTP 302 Found) to file:///etc/passwd?access_token=[redacted]&x=1, which idcli does not follow',
    );
    expect(r.stderr).not.toContain('to null');
    expect(r.stderr).not.toContain('s3cr3t');
    expect(ctx.emu.requests.map((q) => q.path)).toEqual(['/v1/doc']);
  }, 60_000);
});

/** A server of /v1/items pages whose links a test chooses, however long: for the echo and loop-guard tests. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Serves /v1/items pages as `route(query)` decides, accepting request lines of megabytes. */
export async function hostile(route: (url: URL) => { status?: number; body: string }): Promise<{
  url: string;
  requests: number;
  close: () => Promise<void>;
}> {
  const state = { requests: 0 };
  const server: Server = createServer({ maxHeaderSize: 8 * 1024 * 1024 }, (req, res) => {
    state.requests++;
    const { status = 200, body } = route(new URL(req.url ?? '/', 'http://x'));
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export function page(items: string[], next?: string): string {
  const links: Record<string, string> = { self: '/v1/items', first: '/v1/items' };
  if (next !== undefined) links.next = next;
  return JSON.stringify({ items: items.map((i) => JSON.parse(i)), links });
}

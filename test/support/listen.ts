import type { AddressInfo, Server, Socket } from 'node:net';

export interface Listening {
  port: number;
  /** Closes the server and drops the connections still open, so a test never waits on a kept-alive one. */
  close(): Promise<void>;
}

/** Starts `server` (node:net, node:http or node:https) on an ephemeral loopback port. */
export async function listenLoopback(server: Server, host = '127.0.0.1'): Promise<Listening> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

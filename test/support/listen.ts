import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';

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

/**
 * A loopback port nothing listens on now: bound, then released, for a program to listen on later or for a run that
 * is to find it closed. Taken below the ports the kernel hands out for port 0 (32768 and up on Linux), where every
 * server of the tests listens: a port of that range, once released, could be handed to another test's server first.
 */
export async function unusedPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!free) continue;
    await new Promise<void>((r) => server.close(() => r()));
    return port;
  }
}

// The connection to the proxy that carries CONNECT requests (undici's ProxyAgent `clientFactory`).
import type { Dispatcher, Pool } from 'undici';
import { showProxy } from './proxy-env.js';
import { NetworkError } from './types.js';
import { errCode } from '../shape.js';

/**
 * undici reads a socket closed under a request (UND_ERR_SOCKET) as a stale keep-alive connection: the request stays
 * queued and a new connection is dialled at once. A CONNECT the proxy hangs up on fails the tunnel that way, so
 * without this a proxy that closes on CONNECT is dialled again and again, and the request never settles.
 */
const REDIALLED_CODES = new Set(['UND_ERR_SOCKET', 'UND_ERR_INFO']);

/** `pool`, whose CONNECT requests fail with an error undici passes on to the request instead of dialling again. */
export function tunnelClient(pool: Pool, proxy: URL): Pool {
  const connect: (options: Dispatcher.ConnectOptions) => Promise<Dispatcher.ConnectData> = pool.connect.bind(pool);
  const tunnel = async (options: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData> => {
    try {
      return await connect(options);
    } catch (err) {
      if (!REDIALLED_CODES.has(errCode(err) ?? '')) throw err;
      throw new NetworkError(
        `the proxy ${showProxy(proxy)} closed the connection instead of opening the tunnel (CONNECT)`,
        'ECONNRESET',
        { cause: err },
      );
    }
  };
  return Object.assign(pool, { connect: tunnel });
}

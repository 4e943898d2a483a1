// A link that charges every round trip: a TCP relay in front of the emulator that holds each direction's bytes for
// half the round trip (as toxiproxy's latency toxic does), and paces what the server sends through the link's byte
// budget. A TCP accept, a TLS handshake and each request then pay what they pay on a real network.
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { machineClock } from './clock.js';
import { LINK_BURST, LINK_PIECE } from './link.js';
import { TokenBucket } from './token-bucket.js';
import type { EmulatorClock } from './types.js';

export interface RelayOptions {
  /** The server's port, on `host`. */
  target: number;
  /** The round trip: each direction holds its bytes for half of it. */
  roundTripMs: number;
  /** Bandwidth of the server-to-client direction, shared by every connection; default unlimited. */
  bandwidthMbps?: number;
  /** Where the server listens and the relay listens too; default 127.0.0.1. */
  host?: string;
  /** The relay's port; default a free one. */
  port?: number;
  /** The clock the bytes are held on; default the machine's. */
  clock?: EmulatorClock;
}

export interface Relay {
  port: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Bytes the server sent through the relay so far (TLS records and all). */
  readonly downBytes: number;
  close(): Promise<void>;
}

/** Past this many bytes held in one direction, the sender is paused, as a full receive window would. */
const HELD_HIGH_WATER = 1 << 20;

interface Direction {
  halfMs: number;
  /** The byte budget of this direction, shared with other connections; null when unlimited. */
  bucket: TokenBucket | null;
  clock: EmulatorClock;
  /** Nothing is sent before this time (on `clock`): the connection is not established until then. */
  notBefore?: number;
  count(n: number): void;
}

/** One direction of one connection: every piece leaves `to` at its time, in order, and the end after the last. */
function carry(from: Socket, to: Socket, d: Direction) {
  const { halfMs, bucket, count, clock } = d;
  const queue: Array<{ at: number; piece: Buffer | null }> = [];
  let held = 0;
  let timer: { clear(): void } | undefined;
  let last = 0;

  const pump = () => {
    timer = undefined;
    const now = clock.now();
    while (queue.length > 0 && queue[0]!.at <= now) {
      const { piece } = queue.shift()!;
      if (piece === null) {
        to.end();
        return;
      }
      held -= piece.length;
      count(piece.length);
      to.write(piece);
    }
    if (held < HELD_HIGH_WATER && from.isPaused()) from.resume();
    if (queue.length > 0) timer = clock.setTimeout(pump, queue[0]!.at - now);
  };
  const hold = (piece: Buffer | null) => {
    const now = clock.now();
    const wait = piece !== null && bucket !== null ? bucket.reserve(piece.length) : 0;
    // Never earlier than what is already queued: a link does not reorder a connection's bytes.
    last = Math.max(last, Math.max(now, d.notBefore ?? 0) + wait + halfMs);
    queue.push({ at: last, piece });
    if (timer === undefined) timer = clock.setTimeout(pump, last - now);
  };

  from.on('data', (data: Buffer) => {
    for (let at = 0; at < data.length; at += LINK_PIECE) hold(data.subarray(at, at + LINK_PIECE));
    held += data.length;
    if (held >= HELD_HIGH_WATER) from.pause();
  });
  from.on('end', () => hold(null));
  // Bytes for a socket that is gone have nowhere to go.
  to.on('close', () => timer?.clear());
}

export async function startRelay(opts: RelayOptions): Promise<Relay> {
  const { roundTripMs, bandwidthMbps, clock = machineClock } = opts;
  if (!(Number.isFinite(roundTripMs) && roundTripMs >= 0)) throw new Error('the round trip must be ≥ 0 ms');
  // Mbit/s are 10^6 bits per second: 125 bytes per millisecond per Mbit/s, with the emulator link's burst.
  const bucket =
    bandwidthMbps === undefined ? null : new TokenBucket(bandwidthMbps * 125, LINK_BURST, () => clock.now());
  const sockets = new Set<Socket>();
  let connections = 0;
  let downBytes = 0;

  const server = createServer({ allowHalfOpen: true }, (client) => {
    connections++;
    // The kernel completed the TCP handshake on loopback at once; a real one takes a round trip before the client
    // may send, so the client's first bytes arrive a round trip and a half after its connect.
    const established = clock.now() + roundTripMs;
    const upstream = connect({ port: opts.target, host: opts.host ?? '127.0.0.1', allowHalfOpen: true });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.setNoDelay(true);
      // A reset on one side is a reset on the other, at once: a link carries no state of its own.
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      s.on('close', () => sockets.delete(s));
    }
    const halfMs = roundTripMs / 2;
    carry(client, upstream, { halfMs, bucket: null, clock, notBefore: established, count: () => {} });
    carry(upstream, client, {
      halfMs,
      bucket,
      clock,
      count: (n) => {
        downBytes += n;
      },
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    get downBytes() {
      return downBytes;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// Bytes on the wire: what the emulator wrote to its sockets, heads and bodies as sent (compressed when compressed).
import type { Socket } from 'node:net';

export class WireMeter {
  private closed = 0;
  private readonly live = new Set<Socket>();

  track(socket: Socket): void {
    this.live.add(socket);
    socket.once('close', () => {
      this.live.delete(socket);
      this.closed += socket.bytesWritten;
    });
  }

  /** Ends every connection still open, as a server that shuts down does. */
  destroyAll(): void {
    for (const s of this.live) s.destroy();
  }

  bytes(): number {
    let n = this.closed;
    for (const s of this.live) n += s.bytesWritten;
    return n;
  }
}

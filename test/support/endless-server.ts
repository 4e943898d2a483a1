/**
 * A hostile server on loopback whose every answer is a 200 with a gzip body that decodes to (almost) nothing and
 * never ends: a header whose file name runs on (`1f 8b 08 08 …` then `A` without end), empty gzip members one after
 * the other, or members of one byte each behind a long header field. The body is chunked or delimited by closing the
 * connection. It writes only as fast as the client reads (it waits for 'drain'), so what grows, if anything, is the
 * client's memory, never the test's.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';

export type EndlessBody = 'endless-header' | 'empty-members' | 'sparse-members';
export type Framing = 'chunked' | 'close';

export interface EndlessServer {
  url: string;
  /** The request lines received, e.g. `POST /oauth/token`. */
  requests: string[];
  /** Body bytes written to clients so far (into the socket's buffers), all connections together. */
  sent(): number;
  close(): Promise<void>;
}

const BLOCK = 64 * 1024;

/** The bytes that follow the head: what comes first, then a block repeated for ever. */
function bodyOf(kind: EndlessBody): { start: Buffer; block: Buffer } {
  if (kind === 'endless-header') {
    // FLG.FNAME set; the zero byte that would end the name never comes.
    return { start: Buffer.from([0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 0xff]), block: Buffer.alloc(BLOCK, 0x41) };
  }
  // Empty members decode to nothing; members of one space each decode to a byte now and then.
  if (kind === 'empty-members') {
    const member = gzipSync(Buffer.alloc(0));
    return {
      start: Buffer.alloc(0),
      block: Buffer.concat(Array.from({ length: Math.floor(BLOCK / member.length) }, () => member)),
    };
  }
  // The member's header carries an extra field (FEXTRA) as long as a block, which zlib passes over without output:
  // the body still decodes to a byte now and then, and reaches idcli's size limit with a fraction of the inflating.
  return { start: Buffer.alloc(0), block: withExtraField(gzipSync(' '), BLOCK - 64) };
}

/** `member` with an extra field of one subfield holding `size` bytes (RFC 1952 §2.3.1.1), FLG.FEXTRA set. */
function withExtraField(member: Buffer, size: number): Buffer {
  const field = Buffer.alloc(2 + 4 + size, 0x45);
  field.writeUInt16LE(4 + size, 0); // XLEN
  field.write('ID', 2, 'latin1'); // SI1, SI2
  field.writeUInt16LE(size, 4); // LEN
  const head = Buffer.from(member.subarray(0, 10));
  head[3] = head[3]! | 0x04;
  return Buffer.concat([head, field, member.subarray(10)]);
}

/**
 * What the server sends on one connection at most, then it holds the connection open without a byte more: far past
 * any limit of idcli's, and a client that keeps everything it is sent stops at this and waits for its deadline
 * instead of filling the machine.
 */
export const SEND_AT_MOST = 256 * 1024 * 1024;

export async function startEndlessServer(kind: EndlessBody, framing: Framing): Promise<EndlessServer> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const { start, block } = bodyOf(kind);
  const frame = (b: Buffer): Buffer[] =>
    framing === 'chunked' ? [Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')] : [b];
  let sent = 0;

  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let head = '';
    const onData = (data: Buffer): void => {
      head += data.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      socket.resume(); // a request body, if any, is read and dropped
      requests.push(head.split(' ', 2).join(' '));
      socket.write(
        'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n' +
          (framing === 'chunked' ? 'transfer-encoding: chunked\r\n' : 'connection: close\r\n') +
          '\r\n',
      );
      if (start.length > 0) for (const b of frame(start)) socket.write(b);
      pump();
    };
    /** Writes blocks until the socket's buffer is full, then again once it drains, until the client goes. */
    let sentHere = 0;
    const pump = (): void => {
      while (!socket.destroyed && sentHere < SEND_AT_MOST) {
        let room = true;
        for (const b of frame(block)) room = socket.write(b);
        sent += block.length;
        sentHere += block.length;
        if (!room) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    socket.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    sent: () => sent,
    close: () => closeAll(server, sockets),
  };
}

function closeAll(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const s of sockets) s.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

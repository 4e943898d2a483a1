/**
 * The socket floor: the same pages over one keep-alive connection, discarded, by the least any Node program
 * can do to fetch them: HTTP/1.1 written straight to a socket that reads into one reused buffer, no parsing
 * beyond the response framing. A stricter reference than floor.ts, whose node:http client costs more per page
 * than idcli's own transport does. Usage: node floor-socket.mjs <collection-url> <totalItems> <pageSize>
 */
import { connect } from 'node:net';

const [url, totalArg, sizeArg] = process.argv.slice(2);
const base = new URL(url as string);
const total = Number(totalArg);
const pageSize = Number(sizeArg);
const pages = Math.max(1, Math.ceil(total / pageSize));

let index = 0;
let bytes = 0;
// Per response: the head read so far, then how many body bytes are still to come.
let head = '';
let remaining = -1;

const readBuffer = Buffer.allocUnsafe(64 * 1024);
const socket = connect({
  host: base.hostname,
  port: Number(base.port),
  onread: {
    buffer: readBuffer,
    callback(n) {
      let i = 0;
      while (i < n) {
        if (remaining < 0) {
          head += readBuffer.toString('latin1', i, n);
          const end = head.indexOf('\r\n\r\n');
          if (end === -1) return true;
          const length = /\r\ncontent-length: *(\d+)/i.exec(head.slice(0, end));
          if (!head.startsWith('HTTP/1.1 200') || !length)
            throw new Error(`unexpected response: ${head.slice(0, end)}`);
          i = n - (head.length - end - 4);
          remaining = Number(length[1]);
          head = '';
        }
        const take = Math.min(remaining, n - i);
        bytes += take;
        remaining -= take;
        i += take;
        if (remaining === 0) {
          remaining = -1;
          next();
        }
      }
      return true;
    },
  },
});

function next(): void {
  if (index === pages) {
    socket.end();
    return;
  }
  socket.write(
    `GET ${base.pathname}?pageIndex=${index++}&pageSize=${pageSize} HTTP/1.1\r\nhost: ${base.host}\r\nauthorization: Bearer bench\r\n\r\n`,
  );
}

socket.on('error', (err) => {
  console.error(err.message);
  process.exitCode = 1;
});
socket.on('close', () => {
  if (bytes === 0 || index !== pages) process.exitCode = 1;
});
next();

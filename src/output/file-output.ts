import { writeSync } from 'node:fs';
import { Writable } from 'node:stream';

/**
 * stdout when it is a regular file. Node's own stream for a file makes one write(2) per chunk and drops whatever a
 * short write left over, so a disk that fills in the middle of a page would lose the page's tail without an error.
 * This one writes until the chunk is out or the system refuses (ENOSPC, EFBIG, EIO): then the chunk counts as failed.
 */
export function createFileOutput(fd: number): Writable {
  return new Writable({
    decodeStrings: true,
    write(chunk: Buffer, _encoding, callback) {
      try {
        for (let done = 0; done < chunk.length;) done += writeSync(fd, chunk, done, chunk.length - done);
      } catch (err) {
        callback(err as Error);
        return;
      }
      callback();
    },
  });
}

import { fstatSync, ftruncateSync, writeSync } from 'node:fs';
import type { Writable } from 'node:stream';

/** Node's file stream loses a short write's rest on a full disk silently; here a page is written whole or not at all. */
export function createFileOutput(fd: number): Writable {
  // Loaded here, not at the top: the entry chunk imports this module, and `idcli token` never needs the streams.
  const { Writable } = process.getBuiltinModule('node:stream');
  return new Writable({
    decodeStrings: true,
    write(chunk: Buffer, _encoding, callback) {
      const before = fstatSync(fd).size;
      let done = 0;
      try {
        while (done < chunk.length) done += writeSync(fd, chunk, done, chunk.length - done);
      } catch (err) {
        rollBack(fd, before, done);
        return callback(err as Error); // fs calls throw Errors
      }
      callback();
    },
  });
}

/** Only where the chunk's bytes are exactly the file's tail (`>` or `>>`), never into data that was there before. */
function rollBack(fd: number, before: number, written: number): void {
  try {
    if (written > 0 && fstatSync(fd).size === before + written) ftruncateSync(fd, before);
  } catch {
    // The write error is what gets reported; a tail that cannot be cut is the most that is left of it.
  }
}

/**
 * Files that may hold secrets, written atomically: a temp beside the target, created O_EXCL and 0600 from its first
 * byte, then rename(2), so a reader or a killed run finds the old file or the new one, never a mix.
 */
import { closeSync, constants, openSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export const PRIVATE_FILE_MODE = 0o600;

export interface ReplaceOptions {
  /** fsync the file before the rename and the directory after it: a power cut must not leave an empty file. */
  durable?: boolean;
  /** Runs between the write and the rename. */
  beforeCommit?: () => Promise<void>;
}

/** `<file>.<pid>.<random>.tmp`: the pid tells a later writer whether the temp's writer still runs. */
export async function privateTempName(path: string): Promise<string> {
  const { randomBytes } = await import('node:crypto');
  return `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
}

/** Creates `path`, which must not exist, private and holding `text`. */
export async function createPrivateFile(path: string, text: string, durable = false): Promise<void> {
  const { open } = await import('node:fs/promises');
  const fh = await open(path, 'wx', PRIVATE_FILE_MODE);
  try {
    await fh.writeFile(text, 'utf8');
    if (durable) await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Replaces `path` with a private file holding `text`; throws the file system's error, the temp removed. */
export async function replacePrivateFile(path: string, text: string, opts: ReplaceOptions = {}): Promise<void> {
  const { rename, unlink } = await import('node:fs/promises');
  const tmp = await privateTempName(path);
  try {
    await createPrivateFile(tmp, text, opts.durable);
    await opts.beforeCommit?.();
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
  if (opts.durable) await syncDir(dirname(path));
}

/** createPrivateFile for a caller that must not go on before the file is there. */
export function createPrivateFileSync(path: string, text: string): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, PRIVATE_FILE_MODE);
  try {
    writeFileSync(fd, text);
  } catch (err) {
    closeSync(fd);
    removeQuietly(path);
    throw err;
  }
  closeSync(fd);
}

/** replacePrivateFile, synchronous, through the one temp `tmp` (one a killed run left is removed first). */
export function replacePrivateFileSync(path: string, text: string, tmp: string): void {
  removeQuietly(tmp);
  createPrivateFileSync(tmp, text);
  renameSync(tmp, path);
}

export function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone, or never written.
  }
}

/** After a rename the directory entry itself must reach the disk (POSIX fsync(2) on the directory). */
export async function syncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return; // Windows cannot open a directory for fsync; NTFS journals the rename.
  const { open } = await import('node:fs/promises');
  try {
    const fh = await open(dir, constants.O_RDONLY);
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // Some filesystems (e.g. certain network mounts) refuse fsync on directories; the rename still happened.
  }
}

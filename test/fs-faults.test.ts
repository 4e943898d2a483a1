/**
 * The one mapper of failed file operations: each code a user can mend is exit 2 with its reason and fix, anything
 * else exit 1 naming the path and the code. Real directories and files: the fix names what is really there.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, IdcliError } from '../src/errors.js';
import { fsFault, type FsFaultAt } from '../src/fs-faults.js';

let root: string;
let dir: string;
let file: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'idcli-fs-faults-'));
  dir = join(root, 'store');
  file = join(dir, 'record.json');
  await mkdir(dir);
  await writeFile(file, '{}');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const failed = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: failed`), { code });

/** The one line the user reads: message and hint, as the entry prints them. */
function line(err: IdcliError): string {
  return err.hint === undefined ? err.message : `${err.message}; ${err.hint}`;
}

function fault(code: string, at: Partial<FsFaultAt> = {}): IdcliError {
  return fsFault(failed(code), { doing: 'write', path: file, dir, ...at });
}

describe('a fault the user can mend: exit 2, the reason in words and the code, and the fix', () => {
  it.each([
    ['EACCES', 'permission denied', () => `make ${dir} writable for you (chmod u+rwx '${dir}')`],
    ['EPERM', 'operation not permitted', () => `make ${dir} writable for you (chmod u+rwx '${dir}')`],
    ['EROFS', 'read-only file system', () => `mount the file system of ${dir} read-write`],
    ['ENOSPC', 'no space left on the disk', () => `free some space on the disk of ${dir}`],
    ['EDQUOT', 'disk quota exceeded', () => 'free some space within your disk quota'],
    ['EISDIR', 'it is a directory', () => `remove or rename the directory ${file}`],
    ['ELOOP', 'it is a symbolic link', () => `remove the link ${file}`],
  ])('%s', (code, reason, fix) => {
    const err = fault(code);
    expect(err).toBeInstanceOf(IdcliError);
    expect(err.exitCode).toBe(ExitCode.USAGE);
    expect(err.code).toBe('FS_REFUSED');
    expect(line(err)).toBe(`cannot write ${file}: ${reason} (${code}); ${fix()}`);
    expect((err as Error).cause).toBeInstanceOf(Error);
  });

  it('a read that is refused asks for the file to be readable, with the mode a file needs', () => {
    const err = fault('EACCES', { doing: 'read', dir: file });
    expect(err.exitCode).toBe(ExitCode.USAGE);
    expect(err.code).toBe('FS_REFUSED');
    expect(line(err)).toBe(
      `cannot read ${file}: permission denied (EACCES); make ${file} readable for you (chmod u+rw '${file}')`,
    );
  });

  it.each(['ENOTDIR', 'EEXIST'])('%s: the file in the way is named, however far up it is', async (code) => {
    const blocker = join(root, 'config');
    await writeFile(blocker, '');
    const path = join(blocker, 'idcli', 'deeper', 'config.json');
    const err = fault(code, { doing: 'create', path, dir: join(blocker, 'idcli', 'deeper') });
    expect(err.exitCode).toBe(ExitCode.USAGE);
    expect(err.code).toBe('FS_REFUSED');
    expect(line(err)).toBe(
      `cannot create ${path}: ${blocker} is a file, not a directory (${code}); remove or rename ${blocker}`,
    );
  });

  it('ENOTDIR with nothing in the way any more (it was moved since) still says what to look at', () => {
    const path = join(dir, 'sub', 'x');
    expect(line(fault('ENOTDIR', { path }))).toBe(
      `cannot write ${path}: a part of it is not a directory (ENOTDIR); check ${path}`,
    );
  });

  it('a directory not there yet: the nearest one above it that is, where it would be created', () => {
    const missing = join(dir, 'locks', 'deeper');
    expect(fault('EACCES', { doing: 'create', path: missing, dir: missing }).hint).toBe(
      `make ${dir} writable for you (chmod u+rwx '${dir}')`,
    );
  });

  it("the caller's further way out follows the fix", () => {
    const orElse = 'or set IDCLI_CONFIG_DIR to another directory';
    expect(fault('EROFS', { orElse }).hint).toBe(`mount the file system of ${dir} read-write, ${orElse}`);
    expect(fault('EACCES', { orElse }).hint).toBe(`make ${dir} writable for you (chmod u+rwx '${dir}'), ${orElse}`);
  });

  it('the chmod is quoted for the shell', async () => {
    const odd = join(root, "it's here");
    await mkdir(odd);
    expect(fault('EACCES', { dir: odd }).hint).toBe(
      `make ${odd} writable for you (chmod u+rwx '${root}/it'\\''s here')`,
    );
  });
});

describe('a path too long: exit 2, shown by its start and its end, saying what is too long', () => {
  it('a path over PATH_MAX', () => {
    const long = `${root}/${'a/'.repeat(2500)}x.ndjson`;
    const err = fault('ENAMETOOLONG', { doing: 'create', path: long, dir: long });
    expect(err.exitCode).toBe(ExitCode.USAGE);
    expect(err.code).toBe('FS_REFUSED');
    expect(line(err)).toMatch(
      /^cannot create \/tmp\/\S+…[a/]+\/x\.ndjson: it is too long \(\d+ bytes\) \(ENAMETOOLONG\); use a shorter path$/,
    );
    expect(line(err).length).toBeLessThan(300);
    expect(line(err)).toContain(long.slice(0, 60));
    expect(line(err)).toContain(long.slice(-60));
  });

  it('a name over NAME_MAX', () => {
    const long = join(dir, `${'n'.repeat(300)}.ndjson`);
    const err = fault('ENAMETOOLONG', { doing: 'create', path: long, dir });
    expect(err.exitCode).toBe(ExitCode.USAGE);
    expect(line(err)).toContain(': a name in it is longer than 255 bytes (ENAMETOOLONG); use a shorter name');
    expect(line(err).length).toBeLessThan(300);
  });

  it('a path of a usual length is shown whole', () => {
    expect(fault('ENAMETOOLONG').message).toContain(`cannot write ${file}:`);
  });
});

describe('any other fault: exit 1, what failed on which path and the code, no fix to offer', () => {
  it.each(['EIO', 'EBUSY', 'EMFILE'])('%s', (code) => {
    for (const doing of ['read', 'write', 'create', 'open', 'delete'] as const) {
      const err = fsFault(failed(code), { doing, path: file, dir, orElse: 'or set IDCLI_CONFIG_DIR' });
      expect(err.exitCode).toBe(ExitCode.INTERNAL);
      expect(err.code).toBe('FS_FAILED');
      expect(err.message).toBe(`cannot ${doing} ${file} (${code})`);
      expect(err.hint).toBeUndefined();
    }
  });

  it('an error without a code is told by its message', () => {
    const err = fsFault(new Error('stream was destroyed'), { doing: 'read', path: file, dir });
    expect(err.exitCode).toBe(ExitCode.INTERNAL);
    expect(err.code).toBe('FS_FAILED');
    expect(err.message).toBe(`cannot read ${file} (stream was destroyed)`);
  });
});

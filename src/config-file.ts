/**
 * config.json, read and written under the private-path rule (src/private-path.ts): a config directory another user
 * owns or may write could point idcli, and the token it sends, at any server (docs/cli.md, "Private files").
 */
import { closeSync, constants, openSync } from 'node:fs';
import { join } from 'node:path';
import { type ConfigFile, type ConfigFileOptions, emptyConfigFile, parseConfigFile } from './config.js';
import { IdcliError, usageError } from './errors.js';
import { fsFault, type FsFaultAt } from './fs-faults.js';
import { errCode } from './shape.js';
import { replacePrivateFile } from './private-file.js';
import {
  checkPrivateDir,
  O_NOFOLLOW,
  O_NONBLOCK,
  readBoundedBytes,
  refuseOpenedFile,
  resolveTrusted,
  TooLarge,
} from './private-path.js';

const configPath = (configDir: string): string => join(configDir, 'config.json');

/** The way out of a fault in the config directory that every fix there offers (see fs-faults.ts). */
export const CONFIG_DIR_ELSEWHERE = 'or set IDCLI_CONFIG_DIR to another directory';
export const CONFIG_DIR_OWN =
  'use a config directory of your own (IDCLI_CONFIG_DIR), or have its owner hand it over (chown)';

/** Far above any real config (a few profiles of a few URLs), far below what could exhaust memory. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** A failure to read or parse the file rejects the promise, as any async read's would. */
export function loadConfigFile(configDir: string, opts: ConfigFileOptions = {}): Promise<ConfigFile> {
  return new Promise((resolve) => resolve(readConfigFile(configDir, opts)));
}

/** Synchronous: a small file read by every command, where the thread pool's start would cost more than the read. */
function readConfigFile(configDir: string, opts: ConfigFileOptions): ConfigFile {
  const path = configPath(configDir);
  if (!checkConfigDir(configDir, opts.warn, path)) return emptyConfigFile();
  const fix = 'remove it, or replace it with a file written by `idcli config set`';
  let fd: number | undefined;
  try {
    // O_NONBLOCK: a FIFO (or a device) put in the file's place must be refused, not wait forever for a writer.
    fd = openSync(resolveTrusted(path, fix), constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    refuseOpenedFile(fd, path, fix, true);
    return parseConfigFile(readBoundedBytes(fd, MAX_CONFIG_BYTES), path);
  } catch (err) {
    if (err instanceof IdcliError) throw err;
    if (err instanceof TooLarge)
      throw usageError('CONFIG_FILE_TOO_LARGE', `${path} is larger than ${MAX_CONFIG_BYTES / 1024 / 1024} MB`, fix);
    if (fd === undefined && errCode(err) === 'ENOENT') return emptyConfigFile();
    if (fd === undefined && errCode(err) === 'ELOOP')
      throw usageError('SYMLINK_REFUSED', `refusing to follow the symbolic link ${path}`, fix);
    throw configDirFault(configDir, path, err, 'read');
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The config directory made ready for a write of config.json: created when missing, checked, and writable. A fault is
 * named here as the write would name it, before the lock that the writers take in it is created.
 */
export async function prepareConfigDir(configDir: string, opts: ConfigFileOptions = {}): Promise<void> {
  // Imported here: every command reads the config file, only `config set` and `config unset` write it.
  const { access, mkdir } = await import('node:fs/promises');
  // Checked before it is made too: nothing is created under a directory another user could swap.
  if (!checkConfigDir(configDir, opts.warn)) {
    await mkdir(configDir, { recursive: true, mode: 0o700 }).catch((err: unknown) => {
      throw configDirFault(configDir, configDir, err, 'create');
    });
    checkConfigDir(configDir, opts.warn);
  }
  await access(configDir, constants.W_OK).catch((err: unknown) => {
    throw configDirFault(configDir, configPath(configDir), err, 'write');
  });
}

/**
 * Atomic replace, so an interrupted `config set` leaves the old file, never half of a new one. `beforeCommit` runs
 * right before the rename (a throw leaves the old file). A file larger than loadConfigFile reads is never written:
 * every later command would refuse it.
 */
export async function saveConfigFile(
  configDir: string,
  file: ConfigFile,
  opts: ConfigFileOptions & { beforeCommit?: () => Promise<void> } = {},
): Promise<void> {
  const path = configPath(configDir);
  const text = `${JSON.stringify(file, null, 2)}\n`;
  if (Buffer.byteLength(text) > MAX_CONFIG_BYTES)
    throw usageError(
      'CONFIG_FILE_TOO_LARGE',
      `not written: ${path} would be larger than ${MAX_CONFIG_BYTES / 1024 / 1024} MB, more than idcli reads`,
      'remove profiles or keys you no longer need (`idcli config unset`)',
    );
  await prepareConfigDir(configDir, opts);
  await replacePrivateFile(path, text, opts.beforeCommit ? { beforeCommit: opts.beforeCommit } : {}).catch(
    (err: unknown) => {
      if (err instanceof IdcliError) throw err;
      throw configDirFault(configDir, path, err, 'write');
    },
  );
}

/** The config directory, which holds the file store, checked as private (false when it does not exist). */
function checkConfigDir(configDir: string, warn: (msg: string) => void = () => {}, reading = configDir): boolean {
  try {
    return checkPrivateDir(configDir, { warn, hint: CONFIG_DIR_OWN, follow: true });
  } catch (err) {
    if (err instanceof IdcliError) throw err;
    throw configDirFault(configDir, reading, err, 'read');
  }
}

function configDirFault(configDir: string, path: string, err: unknown, doing: FsFaultAt['doing']): IdcliError {
  return fsFault(err, { doing, path, dir: configDir, orElse: CONFIG_DIR_ELSEWHERE });
}

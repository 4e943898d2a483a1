/**
 * The daemon of a scripts/with-keyring.sh run, read from its directory (IDCLI_TEST_KEYRING_DIR), where
 * scripts/keyring-daemon.sh writes the running daemon's pid and a line for each daemon that ended.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { until } from './until.js';

/** The pid of the daemon D-Bus started last. */
export function daemonPid(dir: string): number {
  return Number(readFileSync(join(dir, 'daemon.pid'), 'utf8'));
}

/** Resolves once the daemon `pid` has ended and its exit is recorded. */
export async function exitRecorded(dir: string, pid: number): Promise<void> {
  const exits = (): string => {
    try {
      return readFileSync(join(dir, 'daemon.exits'), 'utf8');
    } catch {
      return '';
    }
  };
  await until(() => (exits().includes(` ${pid} `) ? true : undefined), 20_000, 'the daemon’s exit record');
}

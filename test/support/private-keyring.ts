/**
 * A Secret Service of one test's own: a private D-Bus session bus with a gnome-keyring on it, so the test can lock
 * the keyring, and unlock it again, without touching the keyring the rest of the suite shares. The same tools as
 * scripts/with-keyring.sh (dbus-daemon, dbus-send, gnome-keyring-daemon).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { until } from './until.js';

const PASSWORD = 'idcli-private-keyring';
const SERVICE = '/org/freedesktop/secrets';
/** A session bus that starts nothing on demand: between unlock()'s stop and start, no other daemon takes the name. */
const BUS_CONFIG = join(dirname(fileURLToPath(import.meta.url)), 'dbus-session.conf');

export interface PrivateKeyring {
  /** What a child needs to use this keyring instead of the suite's: merge it into the CLI's environment. */
  env: Record<string, string>;
  /** Locks the default collection, as a screen lock or a timeout does. */
  lock(): Promise<void>;
  /** Unlocks it the way signing in to the desktop does: the keyring daemon starts again with the password. */
  unlock(): Promise<void>;
  /** How the running daemon ended, e.g. "killed by SIGTRAP", or null while it runs. */
  daemonExit(): string | null;
  close(): Promise<void>;
}

export async function startPrivateKeyring(dir: string): Promise<PrivateKeyring> {
  const runtime = join(dir, 'runtime');
  await mkdir(runtime, { recursive: true, mode: 0o700 });
  await mkdir(join(dir, 'data'), { recursive: true, mode: 0o700 });
  const bus = spawn(
    'dbus-daemon',
    [`--config-file=${BUS_CONFIG}`, '--nofork', '--print-address=1', `--address=unix:path=${join(dir, 'bus')}`],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const address = await firstLine(bus);
  const env = {
    DBUS_SESSION_BUS_ADDRESS: address,
    XDG_RUNTIME_DIR: runtime,
    XDG_DATA_HOME: join(dir, 'data'),
  };
  const childEnv = { PATH: process.env.PATH ?? '', HOME: dir, ...env };
  const send = (...args: string[]) =>
    promisify(execFile)('dbus-send', ['--session', '--print-reply', ...args], { env: childEnv }).then((r) => r.stdout);

  let daemon: ChildProcess | undefined;
  const startDaemon = async () => {
    const d = spawn('gnome-keyring-daemon', ['--foreground', '--unlock', '--components=secrets'], {
      env: childEnv,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    d.stdin.end(PASSWORD);
    daemon = d;
    await until(
      async () => {
        const out = await send(
          '--dest=org.freedesktop.DBus',
          '/org/freedesktop/DBus',
          'org.freedesktop.DBus.NameHasOwner',
          'string:org.freedesktop.secrets',
        ).catch(() => '');
        return out.includes('boolean true') ? true : undefined;
      },
      20_000,
      'the private gnome-keyring',
    );
  };
  const stopDaemon = async () => {
    const d = daemon;
    daemon = undefined;
    if (!d || d.exitCode !== null || d.signalCode !== null) return;
    const exited = new Promise((resolve) => d.once('exit', resolve));
    d.kill('SIGTERM');
    await exited;
  };
  const collection = async () => {
    const out = await send(
      `--dest=org.freedesktop.secrets`,
      SERVICE,
      'org.freedesktop.Secret.Service.ReadAlias',
      'string:default',
    );
    const path = /object path "([^"]+)"/.exec(out)?.[1];
    if (!path || path === '/') throw new Error('the private keyring has no default collection');
    return path;
  };
  const locked = async () => {
    const out = await send(
      '--dest=org.freedesktop.secrets',
      await collection(),
      'org.freedesktop.DBus.Properties.Get',
      'string:org.freedesktop.Secret.Collection',
      'string:Locked',
    );
    return out.includes('boolean true');
  };

  await startDaemon();
  return {
    env,
    async lock() {
      await send(
        '--dest=org.freedesktop.secrets',
        SERVICE,
        'org.freedesktop.Secret.Service.Lock',
        `array:objpath:${await collection()}`,
      );
      if (!(await locked())) throw new Error('the private keyring did not lock');
    },
    async unlock() {
      await stopDaemon();
      await startDaemon();
      if (await locked()) throw new Error('the private keyring did not unlock');
    },
    daemonExit() {
      if (!daemon) return 'stopped';
      if (daemon.signalCode !== null) return `killed by ${daemon.signalCode}`;
      return daemon.exitCode === null ? null : `exit status ${daemon.exitCode}`;
    },
    async close() {
      await stopDaemon();
      bus.kill('SIGTERM');
    },
  };
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (b: Buffer) => {
      text += b.toString();
      const end = text.indexOf('\n');
      if (end >= 0) resolve(text.slice(0, end).trim());
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`dbus-daemon exited (${code}) before printing its address`)));
  });
}

// Needs a process: the CLI runs as another user, and relative paths resolve in a working directory of its own.
/**
 * Where the config directory is and what happens when it cannot be used: relative XDG_CONFIG_HOME and HOME are
 * ignored (XDG Base Directory spec), and a directory that is a file, lies inside a file, may not be read or may not
 * be written is a one-line configuration error (exit 2) naming the path. Permission faults need an unprivileged
 * user: run as root, the CLI runs as nobody. What config.json holds is in test/config.dir.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configEnv, expectConfigError } from '../support/config-dir.js';
import { type CliResult, runCli, tempDir } from '../support/cli.js';

const ROOT_USER = process.getuid?.() === 0;
/** Who the CLI runs as in these tests: nobody when the tests run as root, else the user running them. */
const AS = ROOT_USER ? { uid: 65534, gid: 65534 } : {};

/** The home directory of the password database of the user the CLI runs as, or undefined when it has none. */
function passwdHome(): string | undefined {
  if (!ROOT_USER) return userInfo().homedir;
  try {
    return execFileSync('getent', ['passwd', '65534'], { encoding: 'utf8' }).split(':')[5];
  } catch {
    return undefined;
  }
}

let tmp: { path: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  tmp = await tempDir('idcli-configdir-');
  // The CLI may run as another user: it must be able to reach what the test made for it.
  await chmod(tmp.path, 0o755);
});
afterEach(async () => {
  await tmp.cleanup();
});

function idcli(args: string[], env: Record<string, string | undefined>, cwd = tmp.path): Promise<CliResult> {
  return runCli(args, {
    env: configEnv(env),
    cwd,
    ...AS,
  });
}

/** A directory the CLI's user owns. */
async function ownDir(path: string, mode = 0o700): Promise<string> {
  await mkdir(path, { recursive: true });
  if (ROOT_USER) await chown(path, 65534, 65534);
  await chmod(path, mode);
  return path;
}

describe('the config directory of the XDG Base Directory spec', () => {
  it('a relative XDG_CONFIG_HOME is ignored: the config goes to $HOME/.config/idcli', async () => {
    const home = await ownDir(join(tmp.path, 'home'));
    const cwd = await ownDir(join(tmp.path, 'cwd'));
    const r = await idcli(['config', 'set', 'scope', 'x'], { HOME: home, XDG_CONFIG_HOME: 'xdg' }, cwd);
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(join(home, '.config', 'idcli', 'config.json'), 'utf8')).toContain('"scope": "x"');
    expect(existsSync(join(cwd, 'xdg'))).toBe(false);
    // An absolute one is still taken.
    const xdg = await ownDir(join(tmp.path, 'xdg'));
    const abs = await idcli(['config', 'set', 'scope', 'y'], { HOME: home, XDG_CONFIG_HOME: xdg }, cwd);
    expect(abs.code, abs.stderr).toBe(0);
    expect(existsSync(join(xdg, 'idcli', 'config.json'))).toBe(true);
  });

  it("a relative HOME is ignored too: the user's home directory is taken", async () => {
    const cwd = await ownDir(join(tmp.path, 'cwd'));
    const r = await idcli(['status'], { HOME: 'home', XDG_CONFIG_HOME: undefined }, cwd);
    const home = passwdHome();
    if (home === undefined) {
      expectConfigError(r, 'no config directory: HOME is not an absolute path');
    } else {
      expect(r.code, r.stderr).toBe(3); // not signed in: nothing was read from the working directory either
      expect(r.stdout).toContain(`Credentials: file ${join(home, '.config', 'idcli', 'credentials')}`);
    }
    expect(existsSync(join(cwd, 'home'))).toBe(false);
  });
});

describe('a config directory that cannot be used', () => {
  it('is a file: exit 2 naming it, for every command', async () => {
    const file = join(tmp.path, 'idcli');
    await writeFile(file, 'not a directory');
    for (const args of [['status'], ['token'], ['config', 'set', 'scope', 'x'], ['config', 'list'], ['logout']]) {
      const r = await idcli(args, { IDCLI_CONFIG_DIR: file });
      expectConfigError(
        r,
        `: ${file} is a file, not a directory (ENOTDIR); remove or rename ${file}, or set IDCLI_CONFIG_DIR`,
      );
      expect(r.stderr).toMatch(new RegExp(`^error: cannot (read|create) ${file}[/:]`));
    }
    expect(await readFile(file, 'utf8')).toBe('not a directory');
  });

  it('lies inside a file (ENOTDIR): exit 2 naming the file in the way', async () => {
    const file = join(tmp.path, 'config');
    await writeFile(file, '');
    const dir = join(file, 'idcli', 'deeper');
    for (const args of [['status'], ['config', 'set', 'scope', 'x'], ['config', 'get', 'scope']]) {
      const r = await idcli(args, { IDCLI_CONFIG_DIR: dir });
      expectConfigError(r, `: ${file} is a file, not a directory (ENOTDIR); remove or rename ${file}`);
      expect(r.stderr).toMatch(new RegExp(`^error: cannot (read|create) ${dir}[/:]`));
    }
  });

  it('may not be read (permission denied): exit 2 naming the path', async () => {
    const locked = join(tmp.path, 'locked');
    await mkdir(locked, { mode: 0o700 });
    // Root owns it when the tests run as root (and the CLI as nobody); else the mode shuts out even its owner.
    if (!ROOT_USER) await chmod(locked, 0o000);
    try {
      const dir = join(locked, 'idcli');
      for (const args of [['status'], ['config', 'list'], ['config', 'set', 'scope', 'x']]) {
        const r = await idcli(args, { IDCLI_CONFIG_DIR: dir });
        // The directory that shuts the CLI out is named, not the config directory below it.
        expectConfigError(
          r,
          `error: cannot read ${dir}/config.json: permission denied (EACCES); make ${locked} readable for you (chmod u+rwx '${locked}'), or set IDCLI_CONFIG_DIR to another directory\n`,
        );
      }
    } finally {
      await chmod(locked, 0o700);
    }
  });

  it('may not be written (read-only): reading still works, `config set` is exit 2 naming the path', async () => {
    const dir = await ownDir(join(tmp.path, 'idcli'));
    const set = await idcli(['config', 'set', 'scope', 'x'], { IDCLI_CONFIG_DIR: dir });
    expect(set.code, set.stderr).toBe(0);
    await chmod(dir, 0o500);
    const again = await idcli(['config', 'set', 'scope', 'y'], { IDCLI_CONFIG_DIR: dir });
    expectConfigError(
      again,
      `error: cannot write ${dir}/config.json: permission denied (EACCES); make ${dir} writable for you (chmod u+rwx '${dir}'), or set IDCLI_CONFIG_DIR to another directory\n`,
    );
    const list = await idcli(['config', 'list'], { IDCLI_CONFIG_DIR: dir });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toBe('scope=x\n');
    // Under a directory that may not be written, it cannot be created either.
    const below = join(dir, 'sub');
    const create = await idcli(['config', 'set', 'scope', 'y'], { IDCLI_CONFIG_DIR: below });
    expectConfigError(
      create,
      `error: cannot create ${below}: permission denied (EACCES); make ${dir} writable for you (chmod u+rwx '${dir}')`,
    );
  });
});

import { execFile } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, baseEnv, runCli, tempDir } from '../support/cli.js';

const run = promisify(execFile);
const hasShell = async (shell: string) =>
  run(shell, ['-c', 'true']).then(
    () => true,
    () => false,
  );

let dir: { path: string; cleanup: () => Promise<void> };
let env: Record<string, string>;
beforeAll(async () => {
  dir = await tempDir();
  // The scripts call `idcli` by name, as an installed binary would be.
  await mkdir(join(dir.path, 'bin'));
  await writeFile(join(dir.path, 'bin', 'idcli'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  await chmod(join(dir.path, 'bin', 'idcli'), 0o755);
  env = {
    ...(baseEnv() as Record<string, string>),
    PATH: `${join(dir.path, 'bin')}:${process.env.PATH}`,
    IDCLI_CONFIG_DIR: join(dir.path, 'cfg'),
  };
  for (const p of ['default', 'staging', 'prod-eu']) {
    const r = await runCli(['--profile', p, 'config', 'set', 'scope', 'x'], { env });
    expect(r.code).toBe(0);
  }
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = await runCli(['completion', shell], { env });
    expect(r.code).toBe(0);
    await writeFile(join(dir.path, `completion.${shell}`), r.stdout);
  }
});
afterAll(() => dir.cleanup());

async function bashComplete(line: string): Promise<string[]> {
  const words = line.split(' ');
  const script = `source ${join(dir.path, 'completion.bash')}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}
_idcli; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const { stdout } = await run('bash', ['-c', script], { env });
  return stdout.split('\n').filter(Boolean).sort();
}

describe('bash', () => {
  it('completes commands, options, option values, config keys and profiles', async () => {
    expect(await bashComplete('idcli lo')).toEqual(['login', 'logout']);
    expect(await bashComplete('idcli token --')).toEqual(
      expect.arrayContaining(['--refresh', '--json', '--min-ttl', '--profile']),
    );
    expect(await bashComplete('idcli login --prompt ')).toEqual(['create', 'login', 'none']);
    expect(await bashComplete('idcli --profile ')).toEqual(['default', 'prod-eu', 'staging']);
    expect(await bashComplete('idcli --profile staging config ')).toEqual(['get', 'list', 'set', 'unset']);
    expect(await bashComplete('idcli config set b')).toEqual(['base-url']);
    expect(await bashComplete('idcli config set base-url ')).toEqual([]);
    expect(await bashComplete('idcli completion ')).toEqual(['bash', 'fish', 'zsh']);
    expect(await bashComplete('idcli list users --page-size ')).toEqual(['auto', 'service']);
  });
  it('completes api: short and long flags, methods, and a header value is not taken for a command', async () => {
    expect(await bashComplete('idcli api users -')).toEqual(
      expect.arrayContaining(['-X', '--method', '-H', '--header', '-f', '--field', '--input', '-i', '--include']),
    );
    expect(await bashComplete('idcli api users -X P')).toEqual(['PATCH', 'POST', 'PUT']);
    expect(await bashComplete('idcli api --method ')).toContain('DELETE');
    expect(await bashComplete('idcli api users -H ')).toEqual([]);
    // The header's value is skipped, so `api` stays the command and its options still complete.
    expect(await bashComplete('idcli api -H X-A:1 users --inc')).toEqual(['--include']);
    // For `token`, --header is a switch: the next word completes as an option again.
    expect(await bashComplete('idcli token --header --j')).toEqual(['--json']);
  });
});

describe.runIf(await hasShell('fish'))('fish', () => {
  const fish = async (line: string) => {
    const { stdout } = await run('fish', ['-c', `source ${join(dir.path, 'completion.fish')}; complete -C '${line}'`], {
      env,
    });
    return stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t')[0])
      .sort();
  };
  it('completes commands, option values, config keys and profiles', async () => {
    expect(await fish('idcli lo')).toEqual(['login', 'logout']);
    expect(await fish('idcli login --prompt ')).toEqual(['create', 'login', 'none']);
    expect(await fish('idcli --profile ')).toEqual(['default', 'prod-eu', 'staging']);
    expect(await fish('idcli config ')).toEqual(['get', 'list', 'set', 'unset']);
    expect(await fish('idcli config get ')).toContain('redirect-uri');
    expect(await fish('idcli token --')).toEqual(
      expect.arrayContaining(['--refresh', '--json', '--min-ttl', '--header']),
    );
    expect(await fish('idcli api users -X ')).toEqual(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT']);
    expect(await fish('idcli api users -')).toEqual(expect.arrayContaining(['-X', '-H', '-f', '-i']));
  });
});

describe.runIf(await hasShell('zsh'))('zsh', () => {
  it('parses and registers _idcli with compsys, naming every command and option value', async () => {
    const file = join(dir.path, 'completion.zsh');
    await run('zsh', ['-n', file]);
    const { stdout } = await run(
      'zsh',
      ['-c', `autoload -Uz compinit && compinit -u -d ${dir.path}/zcd && source ${file} && print $_comps[idcli]`],
      { env },
    );
    expect(stdout.trim()).toBe('_idcli');
    const { readFile } = await import('node:fs/promises');
    const text = await readFile(file, 'utf8');
    for (const c of ['login', 'token', 'api', 'list', 'status', 'logout', 'config', 'doctor', 'completion'])
      expect(text).toContain(`'${c}:`);
    expect(text).toContain('(none login create)');
    expect(text).toContain('idcli __profiles');
    expect(text).toContain("'*'{-H+,--header=}");
    expect(text).toContain("'(-X --method)'{-X+,--method=}");
  });
});

describe('usage', () => {
  it('an unknown shell is a usage error', async () => {
    const r = await runCli(['completion', 'tcsh'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('bash, zsh, fish');
  });
});

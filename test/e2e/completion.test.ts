// Needs a process: real shells (bash, zsh, fish) load the scripts and run the CLI by name on each Tab.
/**
 * The completion scripts in the shells they are for; what the CLI answers in process (`completion` with an unknown
 * shell, `__profiles`) is in test/commands/completion/command.test.ts. Independent shells run at the same time: the tests wait on them.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { baseEnv, IDCLI, tempDir } from '../support/cli.js';
import { hostileConfig, hostileNames } from '../support/hostile-profiles.js';
import { runCommand } from '../support/run-command.js';

const run = promisify(execFile);
const hasShell = async (shell: string) =>
  run(shell, ['-c', 'true']).then(
    () => true,
    () => false,
  );

// zsh is driven through a pseudo-terminal by its own zsh/zpty module.
const hasZpty = await run('zsh', ['-fc', 'zmodload zsh/zpty']).then(
  () => true,
  () => false,
);
/**
 * Where a shell is missing its tests are skipped, unless IDCLI_REQUIRE_SHELLS=1 (set by CI, like the keychain and
 * Chromium guards) makes a missing shell a failure: a run that quietly tested no zsh or fish is not a green one.
 */
const REQUIRE_SHELLS = process.env.IDCLI_REQUIRE_SHELLS === '1';
async function shellTests(what: string, present: boolean | Promise<boolean> = hasShell(what)): Promise<boolean> {
  if (await present) return true;
  if (REQUIRE_SHELLS) throw new Error(`${what} is missing (IDCLI_REQUIRE_SHELLS=1): apt-get install zsh fish`);
  return false;
}
const hasFish = await shellTests('fish');
const hasZsh = await shellTests('zsh');
const hasZptyTests = await shellTests('zsh with its zsh/zpty module', hasZpty);

let dir: { path: string; cleanup: () => Promise<void> };
let env: Record<string, string>;
beforeAll(async () => {
  dir = await tempDir();
  // The scripts call `idcli` by name, as an installed binary would be.
  await mkdir(join(dir.path, 'bin'));
  await writeFile(join(dir.path, 'bin', 'idcli'), `#!/bin/sh\nexec ${IDCLI} "$@"\n`);
  await chmod(join(dir.path, 'bin', 'idcli'), 0o755);
  env = {
    ...(baseEnv() as Record<string, string>),
    PATH: `${join(dir.path, 'bin')}:${baseEnv().PATH}`,
    IDCLI_CONFIG_DIR: join(dir.path, 'cfg'),
  };
  for (const p of ['default', 'staging', 'prod-eu']) {
    const r = await runCommand(['--profile', p, 'config', 'set', 'scope', 'x'], { env });
    expect(r.code).toBe(0);
  }
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = await runCommand(['completion', shell], { env });
    expect(r.code).toBe(0);
    await writeFile(join(dir.path, `completion.${shell}`), r.stdout);
  }
});
afterAll(() => dir.cleanup());

const sq = (w: string) => `'${w.replaceAll("'", `'\\''`)}'`;

/**
 * Presses Tab at the end of `line` as bash does: the function that `complete -p idcli` names is called with the
 * command, the current word and the one before, COMP_WORDS, COMP_CWORD, COMP_LINE and COMP_POINT set.
 */
async function bashComplete(
  line: string,
  opts: { env?: Record<string, string>; cwd?: string } = {},
): Promise<string[]> {
  const words = line.split(' ');
  const script = `source ${sq(join(dir.path, 'completion.bash'))}
spec=$(complete -p idcli) || exit 9
fn=\${spec##*-F }; fn=\${fn%% *}
COMP_WORDS=(${words.map(sq).join(' ')}); COMP_CWORD=${words.length - 1}
COMP_LINE=${sq(line)}; COMP_POINT=\${#COMP_LINE}; COMP_TYPE=9; COMP_KEY=9
"$fn" idcli "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\\n' "\${COMPREPLY[@]}"`;
  // --norc: with a socket for stdin (Node's pipes), a `bash -c` started by no other shell reads ~/.bashrc as if it
  // came through sshd, and the user's own setup would run, slowly, with every Tab of the test.
  const { stdout } = await run('bash', ['--norc', '-c', script], { env: opts.env ?? env, cwd: opts.cwd });
  return stdout.split('\n').filter(Boolean).sort();
}

describe.concurrent('bash', () => {
  it('completes commands, options, option values, config keys and profiles', async ({ expect }) => {
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
  it('completes credential and exec: subcommands, their options and values, and the command to run', async ({
    expect,
  }) => {
    expect(await bashComplete('idcli cre')).toEqual(['credential']);
    expect(await bashComplete('idcli credential ')).toEqual(['git', 'kubectl']);
    expect(await bashComplete('idcli credential kubectl --')).toEqual(
      expect.arrayContaining(['--token-type', '--min-ttl', '--profile']),
    );
    expect(await bashComplete('idcli credential git --')).not.toContain('--token-type');
    expect(await bashComplete('idcli credential kubectl --token-type ')).toEqual(['access', 'id']);
    expect(await bashComplete('idcli credential git ')).toEqual(['erase', 'get', 'store']);
    expect(await bashComplete('idcli credential git get ')).toEqual([]);
    expect(await bashComplete('idcli exec --')).toEqual(expect.arrayContaining(['--env', '--min-ttl']));
    expect(await bashComplete('idcli exec kubect')).toContain('kubectl');
    expect(await bashComplete('idcli exec --env X kubect')).toContain('kubectl');
    expect(await bashComplete('idcli exec -- kubect')).toContain('kubectl');
    expect(await bashComplete('idcli exec kubectl --')).toEqual([]);
  });
  it('completes api: short and long flags, methods, and a header value is not taken for a command', async ({
    expect,
  }) => {
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

describe.runIf(hasFish).concurrent('fish', () => {
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
  it('completes commands, option values, config keys and profiles', async ({ expect }) => {
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
  it('completes credential and exec', async ({ expect }) => {
    expect(await fish('idcli credential ')).toEqual(['git', 'kubectl']);
    expect(await fish('idcli credential kubectl --token-type ')).toEqual(['access', 'id']);
    expect(await fish('idcli credential kubectl --')).toEqual(expect.arrayContaining(['--token-type', '--min-ttl']));
    expect(await fish('idcli credential git ')).toEqual(['erase', 'get', 'store']);
    expect(await fish('idcli exec --')).toEqual(expect.arrayContaining(['--env', '--min-ttl']));
    expect(await fish('idcli exec kubect')).toContain('kubectl');
  });
});

describe.runIf(hasZsh)('zsh', () => {
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
    for (const c of [
      'login',
      'token',
      'api',
      'list',
      'status',
      'logout',
      'config',
      'doctor',
      'completion',
      'credential',
      'exec',
    ])
      expect(text).toContain(`'${c}:`);
    expect(text).toContain('(none login create)');
    expect(text).toContain('idcli __profiles');
    expect(text).toContain("'*'{-H+,--header=}");
    expect(text).toContain("'(-X --method)'{-X+,--method=}");
  });
});

/**
 * Profile names come from config.json, which anyone who can write the config directory controls. Pressing Tab must
 * never run or expand them: each shell is given names that would run a command (leaving a mark file) or glob.
 */
describe('profile names are data, never code', () => {
  let marks: string;
  let work: string;
  let hostile: string[];
  /** Runs the real idcli against a config.json holding the hostile names, beside a valid one. */
  let hostileEnv: Record<string, string>;
  /** Puts a program first on PATH that prints the hostile names for `__profiles`, as the scripts' data. */
  let standInEnv: Record<string, string>;

  beforeAll(async () => {
    marks = join(dir.path, 'marks');
    work = join(dir.path, 'work');
    await mkdir(marks);
    await mkdir(work);
    // What a glob would expand to, in the directory where Tab is pressed.
    await writeFile(join(work, 'glob-victim.txt'), '');
    hostile = hostileNames(marks);
    const cfg = await hostileConfig(join(dir.path, 'hostile-cfg'), hostile);
    hostileEnv = { ...env, IDCLI_CONFIG_DIR: cfg };
    await mkdir(join(dir.path, 'stand-in'));
    await writeFile(join(dir.path, 'names'), [...hostile, 'staging', ''].join('\n'));
    await writeFile(
      join(dir.path, 'stand-in', 'idcli'),
      `#!/bin/sh\n[ "$1" = __profiles ] || exit 1\ncat ${sq(join(dir.path, 'names'))}\n`,
    );
    await chmod(join(dir.path, 'stand-in', 'idcli'), 0o755);
    standInEnv = { ...env, PATH: `${join(dir.path, 'stand-in')}:${env.PATH}` };
  });
  // Each test looks only for the marks its own Tab would leave.
  beforeEach(async () => {
    await rm(marks, { recursive: true, force: true });
    await mkdir(marks);
  });
  const noMarks = async () => expect(await readdir(marks)).toEqual([]);

  it('bash: Tab runs nothing from the real config.json and offers nothing from it', async () => {
    expect(await bashComplete('idcli --profile ', { env: hostileEnv, cwd: work })).toEqual([]);
    await noMarks();
  });

  it('bash: whatever __profiles prints is offered as it is, never run or globbed', async () => {
    const offered = await bashComplete('idcli --profile ', { env: standInEnv, cwd: work });
    expect(offered).toEqual([...hostile, 'staging'].sort());
    expect(offered).not.toContain('glob-victim.txt');
    expect(await bashComplete('idcli --profile st', { env: standInEnv, cwd: work })).toEqual(['staging']);
    expect(await bashComplete('idcli --profile $', { env: standInEnv, cwd: work })).toEqual(
      hostile.filter((n) => n.startsWith('$')).sort(),
    );
    await noMarks();
  });

  it.runIf(hasFish)('fish: whatever __profiles prints is offered as it is, never run or expanded', async () => {
    const fish = async (line: string, e: Record<string, string>) => {
      const { stdout } = await run(
        'fish',
        ['-c', `source ${join(dir.path, 'completion.fish')}; complete -C ${sq(line)}`],
        {
          env: e,
          cwd: work,
        },
      );
      return stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t')[0])
        .sort();
    };
    expect(await fish('idcli --profile ', standInEnv)).toEqual([...hostile, 'staging'].sort());
    expect(await fish('idcli --profile ', hostileEnv)).toEqual([]);
    expect(await fish('idcli --profile st', env)).toEqual(['staging']);
    await noMarks();
  });

  describe.runIf(hasZptyTests)('zsh, typing in a terminal', () => {
    it('offers whatever __profiles prints, each name whole, and runs none of them', async () => {
      const { listing, line } = await zshTab('idcli --profile ', standInEnv, work);
      // zsh shows each candidate quoted as it would insert it.
      for (const shown of ['\\$\\(touch', '\\*', 'x:y', '\\{a,b\\}', '\\~', 'staging'])
        expect(listing).toContain(shown);
      expect(listing).not.toContain('glob-victim.txt');
      expect(line).toBe('idcli --profile');
      await noMarks();
    });
    it('runs nothing from the real config.json, and completes a valid profile from a valid one', async () => {
      const [hostileLine, staging, prod] = await Promise.all([
        zshTab('idcli --profile ', hostileEnv, work),
        zshTab('idcli --profile st', env, work),
        zshTab('idcli token --profile prod', env, work),
      ]);
      expect(hostileLine.line).toBe('idcli --profile');
      await noMarks();
      expect(staging.line).toBe('idcli --profile staging');
      expect(prod.line).toBe('idcli token --profile prod-eu');
    });
    it('completes the subcommands of credential and config, their options and values', async () => {
      // Each line typed into a zsh of its own, all at once.
      const typed: [string, string][] = [
        ['idcli credential ku', 'idcli credential kubectl'],
        ['idcli credential kubectl --token-type acc', 'idcli credential kubectl --token-type access'],
        ['idcli credential git er', 'idcli credential git erase'],
        ['idcli config set base-u', 'idcli config set base-url'],
        ['idcli exec --env X kubect', 'idcli exec --env X kubectl'],
        ['idcli exec -- kubect', 'idcli exec -- kubectl'],
      ];
      const lines = await Promise.all(typed.map(([line]) => zshTab(line, env, work)));
      typed.forEach(([line, completed], i) => expect(lines[i]!.line, line).toBe(completed));
    });
  });
});

/**
 * Types `line` into an interactive zsh (in a pseudo-terminal, through zsh/zpty) that loaded the completion script,
 * presses Tab once, then runs `print` on the resulting line. Keys are sent only once zle shows its prompt, and the
 * printed line comes after the completion has finished: no waiting on the clock.
 */
const ZSH_DRIVER = `zmodload zsh/zpty || exit 3
zpty z 'zsh -f -i'
# The prompt is spelt with an escape, so that the echo of this line does not match it.
zpty -w z "PS1=\\$'Z\\\\x4cE> '; bindkey -e; autoload -Uz compinit; compinit -u -D; source \${(q)1}"
zpty -r z out '*ZLE> *' || exit 4
zpty -w -n z "$2"$'\\t'
# Ctrl-A, then the start of a print command, then Enter: prints the line as the completion left it.
zpty -w z $'\\x01print -r -- DO\\'\\'NE:'
zpty -r z out '*DONE:*'$'\\n' || exit 5
print -r -- "$out"
zpty -d z
`;

/** The driver's file, written once: zshTab runs several zsh at a time. */
let zshDriver: Promise<string> | undefined;

async function zshTab(line: string, e: Record<string, string>, cwd: string) {
  zshDriver ??= (async () => {
    const file = join(dir.path, 'zsh-driver.zsh');
    await writeFile(file, ZSH_DRIVER);
    return file;
  })();
  const driver = await zshDriver;
  const { stdout } = await run('zsh', ['-f', driver, join(dir.path, 'completion.zsh'), line], {
    env: { ...e, TERM: 'xterm' },
    cwd,
  });
  // Without the terminal's control sequences and carriage returns.
  const text = stdout.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
  const done = /^DONE:(.*)$/m.exec(text);
  expect(done, text).not.toBeNull();
  return { listing: text.slice(0, done!.index), line: done![1]!.trim() };
}

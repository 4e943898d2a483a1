import { describe, expect, expectTypeOf, it } from 'vitest';
import { argument, loadAll, option, readOptions, splitTable } from '../../src/argv/define.js';
import { OPTION_KEYS, settingFlags } from '../../src/config.js';
import { commandHelp, rootHelp } from '../../src/argv/help.js';
import { parseArgv, type Parsed } from '../../src/argv/parse.js';
import { SURFACE } from '../../src/commands/index.js';
import { rejected } from '../support/thrown.js';

const COMMANDS = await loadAll(SURFACE, { hidden: true });
const listed = (name: string) => SURFACE.commands.find((c) => c.name === name)?.hidden !== true;

async function run(argv: string[]): Promise<Extract<Parsed, { kind: 'run' }>> {
  const p = await parseArgv(argv, SURFACE);
  if (p.kind !== 'run') throw new Error(`expected a command, got ${p.kind}`);
  return p;
}

const usage = (argv: string[]) => rejected(() => parseArgv(argv, SURFACE), 2);

describe('parseArgv', () => {
  it('takes global options before or after the command, and the command options after it', async () => {
    const a = await run(['--profile', 'stg', 'token', '--json', '--base-url=https://id.example.com']);
    expect(a.path.map((c) => c.name)).toEqual(['token']);
    expect(a.globals).toEqual({ profile: 'stg', baseUrl: 'https://id.example.com' });
    expect(a.options).toEqual({ json: true });
  });
  it('converts integers, applies defaults, and negates --no-*', async () => {
    const l = await run(['list', 'users', '--page-size', '0', '--limit=5']);
    expect(l.args).toEqual(['users']);
    expect(l.options).toMatchObject({ pageSize: 0, limit: 5, maxRetries: 5, concurrency: 'auto' });
    expect((await run(['list', 'users', '--concurrency', '3'])).options.concurrency).toBe(3);
    expect((await run(['login', '--no-browser'])).options).toMatchObject({ browser: false, timeout: 300 });
    expect((await run(['login'])).options.browser).toBeUndefined();
  });
  it('treats everything after -- as arguments', async () => {
    expect((await run(['list', '--', '--weird-path'])).args).toEqual(['--weird-path']);
  });
  it('walks subcommands', async () => {
    const s = await run(['config', 'set', 'scope', 'read write', '--profile', 'x']);
    expect(s.path.map((c) => c.name)).toEqual(['config', 'set']);
    expect(s.args).toEqual(['scope', 'read write']);
    expect(s.globals.profile).toBe('x');
  });
  it('help and version', async () => {
    expect(await parseArgv([], SURFACE)).toEqual({ kind: 'help', path: [] });
    expect((await parseArgv(['--version'], SURFACE)).kind).toBe('version');
    expect((await parseArgv(['-V'], SURFACE)).kind).toBe('version');
    const h = await parseArgv(['help', 'config', 'set'], SURFACE);
    expect(h.kind === 'help' && h.path.map((c) => c.name)).toEqual(['config', 'set']);
    const h2 = await parseArgv(['list', '--help'], SURFACE);
    expect(h2.kind === 'help' && h2.path.map((c) => c.name)).toEqual(['list']);
  });
  it('refuses mistakes with a suggestion where one is close', async () => {
    expect((await usage(['tokn'])).hint).toBe("did you mean 'token'?");
    expect((await usage(['token', '--jsn'])).hint).toBe("did you mean '--json'?");
    expect((await usage(['config', 'st'])).hint).toBe("did you mean 'set'?");
    expect((await usage(['login', '--prompt', 'nne'])).code).toBe('USAGE_INVALID_CHOICE');
    expect((await usage(['--json', 'token'])).code).toBe('USAGE_OPTION_MISPLACED');
    expect((await usage(['token', '--json=yes'])).code).toBe('USAGE_OPTION_TAKES_NO_VALUE');
    expect((await usage(['token', '--min-ttl'])).code).toBe('USAGE_OPTION_VALUE_MISSING');
    expect((await usage(['token', '--min-ttl', '-5'])).code).toBe('USAGE_NOT_A_NUMBER');
    expect((await usage(['list', 'users', '--concurrency', '0'])).code).toBe('USAGE_NUMBER_OUT_OF_RANGE');
    expect((await usage(['list'])).code).toBe('USAGE_ARGUMENT_MISSING');
    expect((await usage(['list', 'a', 'b'])).code).toBe('USAGE_UNEXPECTED_ARGUMENT');
    expect((await usage(['config'])).code).toBe('USAGE_SUBCOMMAND_MISSING');
    expect((await usage(['completion', 'tcsh'])).code).toBe('USAGE_INVALID_CHOICE');
  });
  it('a number past 2^53 is refused for its size, not as below the minimum', async () => {
    expect((await usage(['token', '--min-ttl', '99999999999999999999'])).code).toBe('USAGE_NUMBER_OUT_OF_RANGE');
    expect((await usage(['token', '--min-ttl', '99999999999999999999'])).message).toBe(
      '--min-ttl must be a whole number no larger than 9007199254740991, not 99999999999999999999',
    );
    expect((await usage(['login', '--timeout', '99999999999999999999'])).message).toBe(
      '--timeout must be between 1 and 86400, not 99999999999999999999',
    );
  });
});

describe('help pages', () => {
  it('every command documents its purpose, each option with its default and env, and examples', async () => {
    for (const cmd of COMMANDS.filter((c) => listed(c.name))) {
      const text = commandHelp([cmd], SURFACE.globals);
      expect(text).toContain(cmd.description);
      for (const o of [...cmd.options, ...SURFACE.globals]) {
        expect(text).toContain(o.flag);
        if (o.env) expect(text).toContain(`env ${o.env}`);
        if (o.defaultValue !== undefined) expect(text).toContain(`default: ${o.defaultValue}`);
      }
      expect(cmd.examples.length, cmd.name).toBeGreaterThanOrEqual(2);
      expect(text).toContain('Examples:');
    }
  });
  it('the root page lists every visible command and the exit codes', async () => {
    const text = rootHelp('1.2.3', SURFACE.globals, await loadAll(SURFACE, { hidden: false }));
    for (const cmd of COMMANDS) expect(text.includes(`  ${cmd.name}`)).toBe(listed(cmd.name));
    expect(text).toContain('Exit codes:');
    expect(text).toContain('1.2.3');
  });
});

describe('short flags and repeatable options', () => {
  it('takes -X value, -Xvalue and the long form alike, and keeps every value of a repeatable option in order', async () => {
    const a = await run(['api', '-X', 'PATCH', 'users/1', '-H', 'Accept: text/csv', '--header=X-A: 1', '-Hx-b: 2']);
    expect(a.args).toEqual(['users/1']);
    expect(a.options).toMatchObject({ method: 'PATCH', header: ['Accept: text/csv', 'X-A: 1', 'x-b: 2'] });
    expect((await run(['api', 'u', '-XDELETE'])).options.method).toBe('DELETE');
    expect((await run(['api', 'u', '-f', 'a=1', '--field', 'b=2', '-f=c'])).options.field).toEqual([
      'a=1',
      'b=2',
      '=c',
    ]);
    expect((await run(['api', 'u', '-i'])).options).toMatchObject({ include: true, maxRetries: 5 });
    expect((await run(['api', 'u'])).options.header).toBeUndefined();
    // A value that looks like a flag is still the value of the option before it.
    expect((await run(['api', 'u', '-H', '-x: 1'])).options.header).toEqual(['-x: 1']);
  });
  it('the same name is a switch for one command and takes a value for another', async () => {
    expect((await run(['token', '--header'])).options.header).toBe(true);
    expect((await usage(['token', '--header=x'])).code).toBe('USAGE_OPTION_TAKES_NO_VALUE');
  });
  it('refuses unknown, misplaced and value-less short flags', async () => {
    expect((await usage(['api', 'u', '-Z'])).code).toBe('USAGE_UNKNOWN_OPTION');
    expect((await usage(['api', 'u', '-ix'])).code).toBe('USAGE_UNKNOWN_OPTION');
    expect((await usage(['api', 'u', '-X'])).code).toBe('USAGE_OPTION_VALUE_MISSING');
    expect((await usage(['list', 'u', '-i'])).code).toBe('USAGE_UNKNOWN_OPTION');
    expect((await usage(['-X', 'GET', 'api', 'u'])).code).toBe('USAGE_OPTION_MISPLACED');
  });
  it('help shows the aliases, the repeatable options and the suggested methods', async () => {
    const text = commandHelp([COMMANDS.find((c) => c.name === 'api')!], SURFACE.globals);
    expect(text).toContain("  -H, --header 'Name: value'");
    expect(text).toContain('      --input <file|->');
    expect(text).toMatch(/--field <key=value> .*repeatable/);
    expect(text).toContain('e.g. GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS');
    expect(text).not.toContain('$(idcli token)');
    expect(rootHelp('1.0.0', SURFACE.globals, COMMANDS)).not.toContain('$(idcli token)');
    expect(commandHelp([COMMANDS.find((c) => c.name === 'token')!], SURFACE.globals)).toContain(
      'idcli token --header | curl -H @-',
    );
  });
});

describe('a command table', () => {
  const table = {
    target: argument({ name: 'path', description: 'where' }),
    shell: argument({ name: 'shell', description: 'which', choices: ['bash', 'zsh'] }),
    count: option.boolean({ flag: '--count', description: 'a switch' }),
    browser: option.negated({ flag: '--no-browser', description: 'a negated switch' }),
    prompt: option.choice({ flag: '--prompt', description: 'a choice', choices: ['none', 'login'] }),
    header: option.list({ flag: '--header', description: 'repeatable' }),
    limit: option.integer({ flag: '--limit', description: 'no default' }),
    minTtl: option.integer({ flag: '--min-ttl', description: 'a default', defaultValue: 60 }),
    concurrency: option.integerOr({
      flag: '--concurrency',
      description: 'or a word',
      keywords: ['auto'],
      defaultValue: 'auto',
    }),
    scope: option.setting('scope'),
  };

  it('hands each option and argument to run as its definition reads it', async () => {
    const given = readOptions(table, {
      options: { count: true, browser: false, prompt: 'login', header: ['a: 1'], limit: 5, concurrency: 3, scope: 'x' },
      args: ['users', 'zsh'],
    });
    expect(given).toEqual({
      target: 'users',
      shell: 'zsh',
      count: true,
      browser: false,
      prompt: 'login',
      header: ['a: 1'],
      limit: 5,
      minTtl: 60,
      concurrency: 3,
      scope: 'x',
    });
    // Checked by the type checker: the type run sees is derived from the table.
    expectTypeOf(given).toEqualTypeOf<{
      target: string;
      shell: 'bash' | 'zsh';
      count: boolean;
      browser: boolean;
      prompt: 'none' | 'login' | undefined;
      header: string[];
      limit: number | undefined;
      minTtl: number;
      concurrency: number | 'auto';
      scope: string | undefined;
    }>();
    const none = readOptions(table, { options: { concurrency: 'auto' }, args: ['u', 'bash'] });
    expect(none).toMatchObject({ count: false, browser: true, header: [], concurrency: 'auto' });
    expect(none.prompt).toBeUndefined();
    expect(none.limit).toBeUndefined();
  });

  it("takes a setting's flag, variable and help from the settings table", async () => {
    expect(table.scope).toMatchObject({ flag: '--scope', env: 'IDCLI_SCOPE', type: 'string' });
    const login = COMMANDS.find((c) => c.name === 'login')!;
    expect(login.options.find((o) => o.flag === '--ui-locales')).toMatchObject({
      key: 'uiLocales',
      env: 'IDCLI_UI_LOCALES',
    });
    expect(SURFACE.globals.find((o) => o.flag === '--profile')).toMatchObject({
      env: 'IDCLI_PROFILE',
      setting: 'profile',
    });
    expect(SURFACE.globals.map((o) => o.flag)).toEqual([
      '--profile',
      '--base-url',
      '--client-id',
      '--client-name',
      '--redirect-uri',
      '--api-base-url',
      '--verbose',
      '--quiet',
    ]);
  });

  it('gives a setting only through an option bound to its row, whatever the option is called', () => {
    const { options } = splitTable({
      // Keys equal to the settings' fields, but not bound: ordinary options of a command.
      scope: option.string({ flag: '--scope', description: 'a scope of some other kind' }),
      issuer: option.string({ flag: '--issuer', description: 'not the setting' }),
      pageSize: option.integer({ flag: '--page-size', description: 'not the setting' }),
      // Bound, under keys that are not the fields.
      locales: option.setting('ui-locales'),
      size: option.setting('page-size'),
    });
    const values = { scope: 'x', issuer: 'https://id.example.com', pageSize: 7, locales: 'fr', size: 30 };
    expect(settingFlags(options, values)).toEqual({ uiLocales: 'fr', pageSize: '30' });
    expect(settingFlags(options, { scope: 'x', issuer: 'y', pageSize: 7 })).toEqual({});
  });

  it('--page-size is the page-size setting: a number or a keyword, its default written in the row', async () => {
    const list = COMMANDS.find((c) => c.name === 'list')!;
    const flag = list.options.find((o) => o.flag === '--page-size')!;
    expect(flag).toMatchObject({
      setting: 'page-size',
      type: 'integer',
      keywords: ['auto', 'service'],
      defaultText: 'auto',
    });
    expect(flag.defaultValue).toBeUndefined();
    const given = await run(['list', 'users', '--page-size', 'service']);
    expect(settingFlags(given.command.options, given.options)).toEqual({ pageSize: 'service' });
    expect(settingFlags(given.command.options, (await run(['list', 'users'])).options)).toEqual({});
  });

  it("binds every setting's flag to its row, in every command and among the globals", () => {
    const all = [
      SURFACE.globals,
      ...COMMANDS.flatMap((c) => [c.options, ...(c.subcommands ?? []).map((s) => s.options)]),
    ];
    const named = all.flat().filter((o) => OPTION_KEYS.some((k) => o.flag === `--${k}`));
    expect(named.length).toBeGreaterThan(OPTION_KEYS.length - 1);
    for (const o of named) expect(o.setting, o.flag).toBe(o.flag.slice(2));
  });
});

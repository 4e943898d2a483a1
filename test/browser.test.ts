import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { browserCommands, openBrowser, whyNoBrowser } from '../src/browser.js';
import { tempDir } from './support/cli.js';
import { until } from './support/until.js';
import { HTTP_BROWSER, type Harness, harness } from './support/harness.js';

let dir: { path: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  dir = await tempDir('idcli-browser-');
});
afterEach(() => dir.cleanup());

/** The arguments a recording browser wrote, once it has written them whole. */
const argsIn = (out: string) =>
  readFile(out, 'utf8')
    .then((text) => JSON.parse(text) as string[])
    .catch(() => undefined);

/** A browser that writes its arguments to `<name>.json` in the test's directory; returns its path. */
async function recordingBrowser(name: string, status = 0): Promise<{ path: string; args: () => Promise<string[]> }> {
  const out = join(dir.path, `${name}.json`);
  const path = join(dir.path, name);
  await writeFile(
    path,
    `#!/usr/bin/env node\nrequire('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.argv.slice(2)));\nprocess.exitCode = ${status};\n`,
  );
  await chmod(path, 0o755);
  return { path, args: () => until(() => argsIn(out)) };
}

const URL_WITH_SHELL = "http://127.0.0.1:1/oauth/authorize?a=1&b=$(touch pwned);c='x' `id` | cat";

describe('browserCommands', () => {
  it('reads $BROWSER the Debian way: a :-separated list, words split on whitespace, %s for the URL', () => {
    expect(browserCommands('firefox', 'U')).toEqual([['firefox', 'U']]);
    expect(browserCommands('  firefox   --new-window  ', 'U')).toEqual([['firefox', '--new-window', 'U']]);
    expect(browserCommands('a %s --x:b --url=%s:c', 'U')).toEqual([
      ['a', 'U', '--x'],
      ['b', '--url=U'],
      ['c', 'U'],
    ]);
    expect(browserCommands('w3m %s %s', 'U')).toEqual([['w3m', 'U', 'U']]);
    expect(browserCommands('echo 100%% %s', 'U')).toEqual([['echo', '100%', 'U']]);
    expect(browserCommands('::a: :b::', 'U')).toEqual([
      ['a', 'U'],
      ['b', 'U'],
    ]);
    expect(browserCommands('', 'U')).toEqual([]);
    expect(browserCommands(' : ', 'U')).toEqual([]);
    expect(browserCommands(undefined, 'U')).toEqual([]);
  });

  it('puts a URL holding %s or shell syntax in place as one argument, never read again', () => {
    expect(browserCommands('b %s', 'http://h/?q=%s&r=$(x)')).toEqual([['b', 'http://h/?q=%s&r=$(x)']]);
  });
});

describe('openBrowser', () => {
  it('runs $BROWSER without a shell, with the URL as its one argument', async () => {
    const out = join(dir.path, 'args.json');
    const script = join(dir.path, 'fake-browser');
    await writeFile(
      script,
      `#!/usr/bin/env node\nrequire('node:fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(process.argv.slice(2)));\n`,
    );
    await chmod(script, 0o755);
    const url = "http://127.0.0.1:1/oauth/authorize?a=1&b=$(touch pwned);c='x' `id` | cat";
    const warnings: string[] = [];
    await openBrowser(url, { env: { PATH: process.env.PATH, BROWSER: script }, warn: (m) => warnings.push(m) });
    const args = await until(() => argsIn(out));
    expect(args).toEqual([url]);
    expect(warnings).toEqual([]);
  });

  it('warns instead of failing when $BROWSER cannot start', async () => {
    const warnings: string[] = [];
    await openBrowser('http://127.0.0.1:1/', {
      env: { PATH: process.env.PATH, BROWSER: join(dir.path, 'missing') },
      warn: (m) => warnings.push(m),
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('could not start $BROWSER (ENOENT)');
  });

  it('passes the arguments of $BROWSER and the URL where %s stands, without a shell', async () => {
    const b = await recordingBrowser('fake-browser');
    const warnings: string[] = [];
    const env = { PATH: process.env.PATH, BROWSER: `${b.path} --new-tab=%s $(touch ${join(dir.path, 'pwned')}) ;` };
    await openBrowser(URL_WITH_SHELL, { env, warn: (m) => warnings.push(m) });
    expect(await b.args()).toEqual([`--new-tab=${URL_WITH_SHELL}`, '$(touch', `${join(dir.path, 'pwned')})`, ';']);
    await expect(readFile(join(dir.path, 'pwned'))).rejects.toThrow();
    expect(warnings).toEqual([]);
  });

  it('tries the commands of a :-separated $BROWSER in order: past one that cannot start and one that fails', async () => {
    const failing = await recordingBrowser('failing-browser', 3);
    const b = await recordingBrowser('good-browser');
    const warnings: string[] = [];
    const env = { PATH: process.env.PATH, BROWSER: `${join(dir.path, 'missing')}:${failing.path} %s:${b.path} -x` };
    await openBrowser(URL_WITH_SHELL, { env, warn: (m) => warnings.push(m) });
    expect(await failing.args()).toEqual([URL_WITH_SHELL]);
    expect(await b.args()).toEqual(['-x', URL_WITH_SHELL]);
    expect(warnings).toEqual([]);
  });

  it('warns once, naming each command and why, when no command of the list opens the page', async () => {
    const warnings: string[] = [];
    await openBrowser('http://127.0.0.1:1/', {
      env: { PATH: process.env.PATH, BROWSER: `${join(dir.path, 'missing')} --flag:/bin/false %s` },
      warn: (m) => warnings.push(m),
    });
    await until(async () => (warnings.length > 0 ? true : undefined));
    expect(warnings).toEqual([
      `no command of $BROWSER opened the page (${join(dir.path, 'missing')}: ENOENT; /bin/false: exited with status 1); open the URL above yourself`,
    ]);
  });

  it('warns when $BROWSER exits with an error', async () => {
    const warnings: string[] = [];
    await openBrowser('http://127.0.0.1:1/', {
      env: { PATH: process.env.PATH, BROWSER: '/bin/false' },
      warn: (m) => warnings.push(m),
    });
    await until(async () => (warnings.length > 0 ? true : undefined));
    expect(warnings[0]).toContain('exited with status 1');
  });
});

describe('whyNoBrowser', () => {
  it('keeps the browser shut over SSH and on Linux without a display, unless $BROWSER names one', () => {
    const desktop = { DISPLAY: ':0' };
    expect(whyNoBrowser(desktop, 'linux')).toBeUndefined();
    expect(whyNoBrowser({ WAYLAND_DISPLAY: 'wayland-0' }, 'linux')).toBeUndefined();
    expect(whyNoBrowser({}, 'linux')).toBe('there is no display (DISPLAY and WAYLAND_DISPLAY are not set)');
    expect(whyNoBrowser({ DISPLAY: '' }, 'linux')).toMatch(/no display/);
    expect(whyNoBrowser({}, 'darwin')).toBeUndefined();
    expect(whyNoBrowser({}, 'win32')).toBeUndefined();
    expect(whyNoBrowser({ WSL_DISTRO_NAME: 'Ubuntu' }, 'linux')).toBeUndefined();
    expect(whyNoBrowser({ ...desktop, SSH_CONNECTION: '192.0.2.1 50000 192.0.2.2 22' }, 'linux')).toBe(
      'this is an SSH session',
    );
    expect(whyNoBrowser({ SSH_TTY: '/dev/pts/3' }, 'darwin')).toBe('this is an SSH session');
    expect(whyNoBrowser({ SSH_TTY: '/dev/pts/3', BROWSER: 'w3m' }, 'linux')).toBeUndefined();
    expect(whyNoBrowser({ BROWSER: 'firefox' }, 'linux')).toBeUndefined();
    expect(whyNoBrowser({ SSH_TTY: '/dev/pts/3', BROWSER: '  ' }, 'linux')).toBe('this is an SSH session');
  });
});

describe('login with a $BROWSER list', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('signs in through the second command of $BROWSER, run with its arguments and %s (login)', async () => {
    h = await harness();
    const browser = `${join(dir.path, 'no-such-browser')} --new-window %s:${process.execPath} ${HTTP_BROWSER} %s`;
    const r = await h.command(['login', '--timeout', '30'], { BROWSER: browser });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Signed in as');
    expect(r.stderr).not.toContain('warning');
    expect((await h.record())?.refreshToken).toBeTruthy();
  }, 60_000);
});

import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openBrowser, whyNoBrowser } from '../../src/browser.js';
import { tempDir } from '../support/cli.js';

let dir: { path: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  dir = await tempDir('idcli-browser-');
});
afterEach(() => dir.cleanup());

async function until<T>(probe: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

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
    const args = await until(async () => JSON.parse(await readFile(out, 'utf8')) as string[]);
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

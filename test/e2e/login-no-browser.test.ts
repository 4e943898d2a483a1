// Needs a process: the system opener reads the process's own environment (PATH, DISPLAY), not the run's.
/**
 * Where no browser can be shown (an SSH session, Linux without a display), `idcli login` starts none unless
 * $BROWSER names one, and says why and how to sign in. Through the BUILT CLI, without a terminal on stdin; the
 * system opener finds a "browser" on PATH that really signs in, so one started by mistake would end the wait.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, type TestContext } from 'vitest';
import { authorizeUrlIn, HTTP_BROWSER, type Harness, harness } from '../support/harness.js';

/** The test's own harness, closed once it has finished, so that the tests may wait at the same time. */
async function ownHarness({ onTestFinished }: TestContext): Promise<Harness> {
  const h = await harness();
  onTestFinished(() => h.close());
  return h;
}

/** A PATH whose www-browser and x-www-browser (what xdg-open falls back to) sign in through the emulator. */
async function openerPath(dir: string): Promise<string> {
  const bin = join(dir, 'bin');
  await mkdir(bin, { recursive: true });
  for (const name of ['www-browser', 'x-www-browser']) {
    await writeFile(join(bin, name), `#!/bin/sh\nexec "${process.execPath}" "${HTTP_BROWSER}" "$@"\n`);
    await chmod(join(bin, name), 0o755);
  }
  return `${bin}:${process.env.PATH}`;
}

/** The environment of a machine without a desktop, as `extra` changes it; no $BROWSER unless given. */
async function headless(h: Harness, extra: Record<string, string | undefined> = {}) {
  const empty = join(h.dir, 'empty');
  await mkdir(empty, { recursive: true });
  return h.env({
    PATH: await openerPath(h.dir),
    BROWSER: undefined,
    // No desktop's default handler: the opener falls back to the browsers on PATH.
    XDG_CONFIG_HOME: empty,
    XDG_CONFIG_DIRS: empty,
    XDG_DATA_HOME: empty,
    XDG_DATA_DIRS: empty,
    ...extra,
  });
}

const browserRan = async (h: Harness) => (await readFile(join(h.dir, 'browser.log'), 'utf8').catch(() => '')) !== '';

// Each test has its own harness and the first two wait for their timeout: they run at the same time.
describe.skipIf(process.platform !== 'linux').concurrent('login where no browser can be shown', () => {
  it('without a display: starts no browser, says why, and how to sign in without a terminal', async (t) => {
    const h = await ownHarness(t);
    const r = await h.run(['login', '--timeout', '3'], await headless(h));
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(
      'Not opening a browser: there is no display (DISPLAY and WAYLAND_DISPLAY are not set); set BROWSER to name one.',
    );
    expect(r.stderr).toContain('Open this URL in a browser to sign in:');
    const port = new URL(String(authorizeUrlIn(r.stderr)?.searchParams.get('redirect_uri'))).port;
    expect(r.stderr).toContain(`ssh -L ${port}:127.0.0.1:${port} <this host>`);
    expect(r.stderr).toContain('sign-in timed out after 3 s');
    expect(await browserRan(h)).toBe(false);
  }, 60_000);

  it('over SSH, even with a display: starts no browser and says why', async (t) => {
    const h = await ownHarness(t);
    const r = await h.run(['login', '--timeout', '3'], await headless(h, { DISPLAY: ':0', SSH_TTY: '/dev/pts/7' }));
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain('Not opening a browser: this is an SSH session; set BROWSER to name one.');
    expect(await browserRan(h)).toBe(false);
  }, 60_000);

  it('opens the browser $BROWSER names, over SSH and without a display', async (t) => {
    const h = await ownHarness(t);
    for (const extra of [{ SSH_CONNECTION: '192.0.2.10 50022 192.0.2.20 22' }, {}]) {
      // In process: $BROWSER is started with the run's environment, no system opener involved.
      const r = await h.command(['login', '--timeout', '30'], await headless(h, { ...extra, BROWSER: HTTP_BROWSER }));
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toContain('Not opening a browser');
      expect(r.stderr).toContain('Opening the browser to sign in.');
    }
    expect(h.emu.tokenEvents).toHaveLength(2);
  }, 60_000);

  it('with a display and no SSH: the system opener starts the browser it finds', async (t) => {
    const h = await ownHarness(t);
    const r = await h.run(['login', '--timeout', '30'], await headless(h, { DISPLAY: ':0' }));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('Not opening a browser');
    expect(await browserRan(h)).toBe(true);
  }, 60_000);
});

/**
 * Needs a process: a real Chromium, a process of its own, signs in through the loopback listener of the built CLI.
 * One end-to-end sign-in in a real Chromium (Debian's /usr/bin/chromium driven by playwright-core): the real
 * sign-in page is filled and submitted, the browser follows the real redirect to idcli's loopback listener, and
 * idcli then serves and refreshes tokens. $BROWSER is a tiny script that hands the URL to the test. Over http, and
 * over https with a CA made for the run (idcli trusts it through NODE_EXTRA_CA_CERTS, Chromium by the key's hash).
 */
import { existsSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoSecrets, type Harness, harness } from '../support/harness.js';
import { SCHEMES } from '../support/scheme.js';
import { until } from '../support/until.js';

const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const REQUIRE_CHROMIUM = process.env.IDCLI_REQUIRE_CHROMIUM === '1';

// With IDCLI_REQUIRE_CHROMIUM=1 (CI) a missing Chromium fails the run instead of leaving it out.
describe.runIf(HAVE_CHROMIUM || REQUIRE_CHROMIUM).each(SCHEMES)('sign-in in a real Chromium, over %s', (scheme) => {
  let browser: Browser;
  let h: Harness;

  beforeAll(async () => {
    if (!HAVE_CHROMIUM) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package`);
    h = await harness({ scheme });
    // Chromium does not read NODE_EXTRA_CA_CERTS; it is told to accept the emulator's key, and nothing else.
    const trust = h.spki === undefined ? [] : [`--ignore-certificate-errors-spki-list=${h.spki}`];
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-sync',
        ...trust,
      ],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('signs in through the real page, lands on a page without the code, and the tokens work', async () => {
    const urlFile = join(h.dir, 'sign-in-url.txt');
    const opener = join(h.dir, 'browser-opener.sh');
    await writeFile(opener, `#!/bin/sh\nprintf '%s\\n' "$1" > '${urlFile}.tmp' && mv '${urlFile}.tmp' '${urlFile}'\n`);
    await chmod(opener, 0o755);

    const running = h.run(['login', '--timeout', '90'], { BROWSER: opener }, { timeoutMs: 120_000 });
    const url = await until(
      async () => (await readFile(urlFile, 'utf8').catch(() => '')).trim() || undefined,
      30_000,
      'the sign-in URL',
    );

    // The page is the emulator's, over the scheme under test.
    expect(new URL(url).origin).toBe(h.emu.baseUrl);
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(url);
      await page.fill('#email', h.emu.user.email);
      await page.fill('#password', h.emu.user.password);
      await Promise.all([page.waitForURL(/\/done$/, { timeout: 30_000 }), page.click('button[value="login"]')]);
      // The code has left the address bar: the listener answered the callback with a 303 to its done page.
      const landed = new URL(page.url());
      expect(landed.hostname).toBe('127.0.0.1');
      expect(landed.search).toBe('');
      await expect(page.textContent('body')).resolves.toContain('Signed in as Alice Example <alice@example.com>');
    } finally {
      await context.close();
    }

    const r = await running;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Signed in as Alice Example <alice@example.com>');

    const t = await h.run(['token']);
    const rr = await h.run(['token', '--refresh']);
    expect(t.code).toBe(0);
    expect(rr.code, rr.stderr).toBe(0);
    expect(rr.stdout).not.toBe(t.stdout);
    expect(h.emu.tokenEvents.map((e) => [e.grant, e.ok])).toEqual([
      ['authorization_code', true],
      ['refresh_token', true],
    ]);
    expectNoSecrets(h, [t.stdout.trim(), rr.stdout.trim()]);
    // Chromium asks for HTTP/2 through ALPN, and the emulator offers it.
    if (scheme === 'https') expect(h.emu.connections().http2).toBeGreaterThan(0);
  });
});

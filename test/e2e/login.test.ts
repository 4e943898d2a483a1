// Needs a process: Ctrl-C is a signal to the CLI's process, and exit 130 is how that process ends.
/**
 * `idcli login` stopped by Ctrl-C, through the built CLI (or the single executable under IDCLI_TEST_EXE) against the
 * strict emulator, with the HTTP "browser" that is told not to finish the sign-in.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, harness } from '../support/harness.js';
import { until } from '../support/until.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('login options', () => {
  it('stops with exit 130 on Ctrl-C while waiting', async () => {
    h = await harness();
    let stderr = '';
    const r = await h.run(
      ['login', '--timeout', '60'],
      { HTTP_BROWSER_ACTION: 'none' },
      {
        onSpawn: (child) => {
          child.stderr?.on('data', (b: Buffer) => {
            stderr += b.toString();
            if (stderr.includes('Waiting for the sign-in')) child.kill('SIGINT');
          });
        },
      },
    );
    expect(r.code).toBe(130);
    // The browser outlives idcli (it is detached); its one write must be done before the test's directory goes.
    const browserLog = join(h.dir, 'browser.log');
    await until(
      async () => ((await readFile(browserLog, 'utf8').catch(() => '')).includes('(action none)') ? true : undefined),
      20_000,
      'the browser to write its log',
    );
  });
});

/**
 * Needs a process: the countdown is drawn on a real pseudo-terminal that the built CLI writes to.
 * `login`'s countdown on a pseudo-terminal, through the BUILT CLI: it appears after the URL, counts down, and is
 * gone when the callback arrives or the wait times out; CI and pipes get the one plain line instead. stdin is not
 * the terminal here: with a terminal on stdin, login asks for the pasted address instead (test/e2e/login-paste.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { onTerminal } from '../support/pty.js';
import { frames, screen } from '../support/terminal.js';
import { authorizeUrlIn, browse, expectNoSecrets, type Harness, harness } from '../support/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const WAITING = /^Waiting for the sign-in in the browser: (\d+)s left \(Ctrl-C to cancel\)$/;
const secondsShown = (raw: string) =>
  frames(raw)
    .map((f) => WAITING.exec(f)?.[1])
    .filter((s) => s !== undefined)
    .map(Number);

describe('idcli login on a terminal', () => {
  it('counts down while the browser is out and clears the line when the callback arrives', async () => {
    h = await harness();
    const env = h.env();
    let browsing: Promise<number | null> | undefined;
    const r = await onTerminal(`node "${BIN}" login --no-browser --timeout 30 </dev/null`, {
      env,
      columns: 100,
      onOutput: (raw) => {
        // Two seconds of countdown seen: now the person signs in.
        const url = authorizeUrlIn(raw);
        if (url && !browsing && new Set(secondsShown(raw)).size >= 2) browsing = browse(url.href, env);
      },
    });
    h.outputs.push(r.raw);
    expect(await browsing).toBe(0);
    expect(r.code).toBe(0);

    const shown = secondsShown(r.raw);
    expect(shown[0]).toBe(30);
    expect(shown).toEqual([...new Set(shown)].sort((a, b) => b - a));
    expect(shown.length).toBeGreaterThanOrEqual(2);
    const end = screen(r.raw).filter((l) => l !== '');
    expect(end.some((l) => l.includes('Waiting'))).toBe(false);
    expect(end.at(-1)).toMatch(/^Signed in as .* \(profile default; credentials in .*\)$/);
    expect((await h.record())?.refreshToken).toBeDefined();
    expectNoSecrets(h);
  }, 60_000);

  it('clears the line before the timeout error', async () => {
    h = await harness();
    const r = await onTerminal(`node "${BIN}" login --timeout 2 </dev/null`, {
      env: h.env({ HTTP_BROWSER_ACTION: 'none' }),
    });
    expect(r.code).toBe(3);
    // The count starts at the whole timeout and only goes down; a loaded machine may skip a tick, and a tick
    // between the deadline and the timeout's own timer may show 0s.
    const shown = secondsShown(r.raw).filter((s) => s > 0);
    expect(shown[0]).toBe(2);
    expect(shown).toEqual([...new Set(shown)].sort((a, b) => b - a));
    expect(shown.every((s) => s <= 2)).toBe(true);
    const end = screen(r.raw).filter((l) => l !== '');
    expect(end.some((l) => l.includes('Waiting'))).toBe(false);
    expect(end.at(-1)).toMatch(/^error: sign-in timed out after 2 s/);
  }, 60_000);

  it('prints one plain line instead when CI is set', async () => {
    h = await harness();
    const r = await onTerminal(`node "${BIN}" login --timeout 1 </dev/null`, {
      env: h.env({ HTTP_BROWSER_ACTION: 'none', CI: 'true' }),
    });
    expect(r.code).toBe(3);
    expect(r.raw).toContain('Waiting for the sign-in (up to 1 s; Ctrl-C to cancel)…\r\n');
    expect(secondsShown(r.raw)).toEqual([]);
    expect(r.raw).not.toContain('\x1b[');
  }, 60_000);
});

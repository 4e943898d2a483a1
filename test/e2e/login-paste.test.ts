/**
 * Needs a process: the address is typed on a real pseudo-terminal, which the built CLI has as its stdin.
 * `idcli login` with a terminal on stdin, through the BUILT CLI on a pseudo-terminal: the address a browser on
 * another machine ended on (where the callback cannot load) is pasted, checked like a callback, and signs in;
 * the callback still wins when it comes first; the timeout and Ctrl-C cover the question too. The timeout is a rule
 * about time, not about the terminal: it runs in process on a FakeClock, with stdin and stderr said to be terminals.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { FakeClock } from '../support/clock.js';
import { onTerminal, type TerminalRun } from '../support/pty.js';
import { frames, screen } from '../support/terminal.js';
import {
  authorizeUrlIn,
  browse,
  describeEachStore,
  expectNoSecrets,
  type Harness,
  harness,
  type HarnessOptions,
} from '../support/harness.js';
import { until } from '../support/until.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const QUESTION = 'Paste the address the browser ended on:';
const SSH = { SSH_CONNECTION: '192.0.2.10 50022 192.0.2.20 22', BROWSER: undefined };

/** One `idcli login` on a terminal whose keys the test types. */
interface TerminalLogin {
  done: Promise<TerminalRun>;
  raw(): string;
  type(keys: string): void;
  /** Resolves once `text` has appeared `times` times in what the terminal received. */
  seen(text: string, times?: number): Promise<unknown>;
}

function terminalLogin(args: string, env: Record<string, string | undefined>): TerminalLogin {
  let raw = '';
  let typeKeys: ((keys: string) => void) | undefined;
  const done = onTerminal(`exec node "${BIN}" login ${args}`, {
    env,
    columns: 200,
    onOutput: (soFar) => {
      raw = soFar;
    },
    keyboard: (type) => {
      typeKeys = type;
    },
  });
  const count = (text: string) => raw.split(text).length - 1;
  return {
    done,
    raw: () => raw,
    type: (keys) => typeKeys!(keys),
    seen: (text, times = 1) => until(() => (count(text) >= times ? true : undefined), 20_000, `"${text}" ×${times}`),
  };
}

/**
 * `login --no-browser` on a terminal in a fresh harness (kept in `h`): once it asks for the address and `meanwhile`
 * is done, the browser signs in through the loopback callback. Returns the finished run.
 */
async function callbackWhileAsking(
  meanwhile: (t: TerminalLogin) => Promise<void> = async () => {},
): Promise<TerminalRun> {
  h = await harness();
  const env = h.env();
  const t = terminalLogin('--no-browser --timeout 60', env);
  await t.seen(QUESTION);
  await meanwhile(t);
  expect(await browse(authorizeUrlIn(t.raw())!.href, env)).toBe(0);
  const r = await t.done;
  expect(r.code, r.raw).toBe(0);
  return r;
}

/** Signs in with the "browser on another machine": the address it ended on, not delivered to the listener. */
async function remoteSignIn(harness: Harness, raw: string): Promise<string> {
  const url = authorizeUrlIn(raw);
  expect(url).toBeDefined();
  const landed = join(harness.dir, `landed-${Date.now()}.url`);
  expect(await browse(url!.href, harness.env({ HTTP_BROWSER_ACTION: 'remote', HTTP_BROWSER_LANDED: landed }))).toBe(0);
  return readFile(landed, 'utf8');
}

/** The last line on the terminal's screen that is not empty. */
function lastLine(raw: string): string | undefined {
  return screen(raw)
    .filter((l) => l !== '')
    .at(-1);
}

/** The run signed in: exit 0, "Signed in as" last on the screen, and a refresh token stored. */
async function expectSignedIn(r: TerminalRun): Promise<void> {
  expect(r.code, r.raw).toBe(0);
  expect(lastLine(r.raw)).toMatch(/^Signed in as /);
  expect((await h!.record())?.refreshToken).toBeTruthy();
}

/**
 * `login --no-browser` on a terminal in a fresh harness (kept in `h`), once it asks: the terminal, and the address
 * a browser on another machine ended on.
 */
async function askedWithAddress(opts: HarnessOptions = {}): Promise<{ t: TerminalLogin; address: string }> {
  const started = (h = await harness(opts));
  const t = terminalLogin('--no-browser --timeout 60', started.env());
  await t.seen(QUESTION);
  return { t, address: await remoteSignIn(started, t.raw()) };
}

/** The terminal's output without what was typed (which the terminal shows back, as it should). */
function withoutTyped(raw: string, typed: string[]): string {
  return typed.reduce((text, t) => text.split(t).join('<typed>'), raw);
}

describeEachStore('login with a pasted address', (store) => {
  it('over SSH without $BROWSER: opens no browser, says why, and signs in with the pasted address', async () => {
    h = await harness({ store });
    const t = terminalLogin('--timeout 60', h.env(SSH));
    await t.seen(QUESTION);
    const address = await remoteSignIn(h, t.raw());
    expect(new URL(address).searchParams.get('code')).toBeTruthy();
    expect(h.emu.tokenEvents).toHaveLength(0); // nothing reached the listener
    t.type(`${address}\r`);
    const r = await t.done;
    h.outputs.push(withoutTyped(r.raw, [address]));
    expect(r.code, r.raw).toBe(0);
    expect(r.raw).toContain('Not opening a browser: this is an SSH session; set BROWSER to name one.');
    expect(r.raw).toContain('Open this URL in a browser to sign in:');
    const end = screen(r.raw).filter((l) => l !== '');
    expect(end.at(-1)).toMatch(/^Signed in as Alice Example <alice@example\.com> \(profile default; credentials in /);
    const log = await readFile(join(h.dir, 'browser.log'), 'utf8');
    expect(log).toMatch(/landed on http:\/\/127\.0\.0\.1:\d+\/callback\?code=\*\*\*&state=\*\*\* \(not delivered\)/);
    expect(log).not.toContain('(callback)');
    expect((await h.record())?.refreshToken).toBeTruthy();
    expect(h!.emu.tokenEvents).toHaveLength(1);
    expectNoSecrets(h);
  }, 60_000);

  it('refuses an address with another state, says why, and takes the right one after', async () => {
    const { t, address } = await askedWithAddress({ store });
    const forged = new URL(address);
    forged.searchParams.set('state', `${forged.searchParams.get('state')}x`);
    t.type(`${forged.href}\r`);
    await t.seen('That address is from another sign-in');
    await t.seen(QUESTION, 2);
    expect(h!.emu.tokenEvents).toHaveLength(0);
    t.type(`  ${address}  \r`);
    const r = await t.done;
    h!.outputs.push(withoutTyped(r.raw, [address, forged.href]));
    await expectSignedIn(r);
    expect(h!.emu.tokenEvents).toHaveLength(1);
    expectNoSecrets(h!);
  }, 60_000);
});

describe('login with a pasted address', () => {
  it('asks again after garbled text, a cut-off address and another port, then signs in', async () => {
    const { t, address } = await askedWithAddress();
    const callback = new URL(address);
    t.type('the page said it cannot be reached\r');
    await t.seen("That is not an address: copy the whole address from the browser's address bar.");
    await t.seen(QUESTION, 2);
    t.type(`${callback.origin}${callback.pathname}?code=${callback.searchParams.get('code')}\r`);
    await t.seen('That address is not a whole sign-in response (missing state)');
    await t.seen(QUESTION, 3);
    const otherPort = new URL(address);
    otherPort.port = String(Number(callback.port) === 65535 ? 1024 : Number(callback.port) + 1);
    t.type(`${otherPort.href}\r`);
    await t.seen(`That is not this sign-in's address: it starts with ${callback.origin}${callback.pathname}.`);
    await t.seen(QUESTION, 4);
    t.type('\r'); // an empty line just asks again
    await t.seen(QUESTION, 5);
    expect(h!.emu.tokenEvents).toHaveLength(0);
    t.type(`${address}\r`);
    const r = await t.done;
    expect(r.code, r.raw).toBe(0);
    expect((await h!.record())?.refreshToken).toBeTruthy();
    // What was typed stays on the screen after the question, as the terminal showed it.
    expect(screen(r.raw)).toContain(`${QUESTION} the page said it cannot be reached`);
  }, 60_000);

  it('asks again after an address without a code and one cut off in iss; takes one in bracketed-paste markers', async () => {
    const { t, address } = await askedWithAddress({ sendIss: true });
    expect(new URL(address).searchParams.get('iss')).toBe(h!.emu.baseUrl);
    const noCode = new URL(address);
    noCode.searchParams.delete('code');
    t.type(`${noCode.href}\r`);
    await t.seen('That address carries no code: copy all of it, with everything after "?".');
    await t.seen(QUESTION, 2);
    t.type(`${address.slice(0, -3)}\r`); // cut off inside iss
    await t.seen('That address names another issuer (iss) than');
    await t.seen(QUESTION, 3);
    expect(h!.emu.tokenEvents).toHaveLength(0);
    t.type(`\x1b[200~${address}\x1b[201~\r`);
    const r = await t.done;
    await expectSignedIn(r);
    expect(h!.emu.tokenEvents).toHaveLength(1);
  }, 60_000);

  it('asks again when the service refuses the code of a paste cut off in its code, then takes the whole one', async () => {
    const { t, address } = await askedWithAddress({ sendIss: true });
    const cut = new URL(address);
    cut.searchParams.set('code', cut.searchParams.get('code')!.slice(0, -6));
    t.type(`${cut.href}\r`);
    await t.seen('warning: the service refused the code of that address (invalid_grant)');
    await t.seen(QUESTION, 2);
    expect(h!.emu.tokenEvents).toMatchObject([{ grant: 'authorization_code', ok: false }]);
    t.type(`${address}\r`);
    const r = await t.done;
    await expectSignedIn(r);
    expect(h!.emu.tokenEvents).toMatchObject([
      { grant: 'authorization_code', ok: false },
      { grant: 'authorization_code', ok: true },
    ]);
  }, 60_000);

  it("still takes the browser's own return after a paste without a code", async () => {
    const r = await callbackWhileAsking(async (t) => {
      const authorize = authorizeUrlIn(t.raw())!;
      const callback = authorize.searchParams.get('redirect_uri')!;
      t.type(`${callback}?state=${authorize.searchParams.get('state')}\r`);
      await t.seen('That address carries no code');
      await t.seen(QUESTION, 2);
    });
    expect(lastLine(r.raw)).toMatch(/^Signed in as /);
    expect(h!.emu.tokenEvents).toHaveLength(1);
  }, 60_000);

  it('stops asking at end of input (Ctrl-D) and still takes the callback', async () => {
    const r = await callbackWhileAsking(async (t) => {
      t.type('\x04');
      // The question's row is ended: the cursor moved on to a new row below it.
      const ended = () => screen(t.raw()).slice(-2).join('|') === `${QUESTION} |`;
      await until(() => (ended() ? true : undefined), 20_000, 'the question ended');
    });
    expect(lastLine(r.raw)).toMatch(/^Signed in as /);
  }, 60_000);

  it('lets the callback win when it comes first: the question goes, and no countdown was shown', async () => {
    const r = await callbackWhileAsking();
    const end = screen(r.raw).filter((l) => l !== '');
    expect(end.some((l) => l.includes(QUESTION))).toBe(false);
    expect(end.at(-2)).toBe('Waiting for the sign-in (up to 60 s; Ctrl-C to cancel)…');
    expect(end.at(-1)).toMatch(/^Signed in as /);
    expect(frames(r.raw).some((f) => /\d+s left/.test(f))).toBe(false);
    expect(h!.emu.tokenEvents).toHaveLength(1);
  }, 60_000);

  it('times out while asking (exit 3), the question gone before the error', async () => {
    h = await harness();
    // In process: the rule is about time, counted on a FakeClock; stdin a terminal that is never answered.
    const clock = new FakeClock();
    const started = clock.now();
    const stdin = new PassThrough();
    let asked = false;
    const run = h.command(
      ['login', '--no-browser', '--timeout', '2'],
      {},
      {
        clock,
        stdin,
        tty: { stdin: true, stdout: true, stderr: true },
        onStderr: (text) => (asked ||= text.includes(QUESTION)),
      },
    );
    await until(() => (asked ? true : undefined), 20_000, 'the question');
    await clock.elapse(2000, 'the sign-in timeout');
    const r = await run;
    stdin.destroy();
    expect(r.code, r.stderr).toBe(3);
    expect(clock.now() - started).toBe(2000);
    expect(r.stderr).toContain(QUESTION);
    const end = screen(r.stderr).filter((l) => l !== '');
    expect(end.some((l) => l.includes(QUESTION))).toBe(false);
    expect(end.at(-1)).toMatch(/^error: sign-in timed out after 2 s/);
  }, 60_000);

  it('stops with exit 130 on Ctrl-C while asking', async () => {
    h = await harness();
    const t = terminalLogin('--no-browser --timeout 60', h.env());
    await t.seen(QUESTION);
    t.type('http://127.0.0.1'); // half typed
    t.type('\x03');
    const r = await t.done;
    expect(r.code, r.raw).toBe(130);
    expect(await h.record()).toBeNull();
  }, 60_000);

  it('keeps the pasted addresses out of --verbose output and messages', async () => {
    h = await harness();
    const errFile = join(h.dir, 'stderr.txt');
    const stderr = () => readFile(errFile, 'utf8').catch(() => '');
    const t = terminalLogin(`--no-browser --verbose --timeout 60 2>"${errFile}"`, h.env());
    await until(async () => ((await stderr()).includes(QUESTION) ? true : undefined), 20_000, 'the question');
    const address = await remoteSignIn(h, await stderr());
    const good = new URL(address);
    const forged = new URL(address);
    forged.searchParams.set('state', 'x'.repeat(30));
    t.type(`${forged.href}\r`);
    await until(async () => ((await stderr()).split(QUESTION).length === 3 ? true : undefined), 20_000, 'asked again');
    t.type(`${address}\r`);
    const r = await t.done;
    expect(r.code, r.raw).toBe(0);
    const err = await stderr();
    expect(err).toContain('* paste: refused an address (state does not match); still waiting');
    expect(err).toContain('/oauth/token -> 200');
    expect(err).not.toContain(good.searchParams.get('code')!);
    expect(err).not.toContain('x'.repeat(30));
    // The state is in the sign-in URL printed for the user to open, and nowhere else.
    expect(err.split(good.searchParams.get('state')!)).toHaveLength(2);
    expect(err).not.toMatch(/\/callback\?[a-z]/);
    h.outputs.push(err);
    expectNoSecrets(h);
  }, 60_000);
});

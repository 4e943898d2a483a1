/**
 * `idcli credential git`: git's credential helper protocol, each command run in process. Real git cloning with idcli
 * as its helper is in test/e2e/credential-git.test.ts.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachStore, expectNoSecrets, harness, type Harness } from '../../support/harness.js';
import { expectOneErrorLine } from '../../support/cli.js';
import { accepted, refreshes, seedSignIn } from '../../support/credential.js';

/** The lines of a helper's answer as attributes. */
const attributes = (stdout: string) =>
  Object.fromEntries(
    stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );

describeEachStore('credential git', (store) => {
  let h: Harness;
  let api: URL;
  let base: URL;
  beforeEach(async () => {
    h = await harness({ store, recordItems: 0 });
    base = new URL(h.emu.baseUrl);
    // Another port of the same host: an origin of its own, which the token may go to only by being api-base-url.
    api = new URL('http://127.0.0.1:1/');
  });
  afterEach(async () => {
    await h?.close();
  });

  const get = (input: string, extra: Record<string, string | undefined> = {}) =>
    h.command(['credential', 'git', 'get'], { IDCLI_API_BASE_URL: api.origin, ...extra }, { stdin: input });

  it('get answers for the host and port of base-url and of api-base-url, with the expiry', async () => {
    const t = await seedSignIn(h);
    const expiry = String(Math.floor((await h.record())!.expiresAt! / 1000));
    for (const host of [base.host, api.host]) {
      const r = await get(`protocol=http\nhost=${host}\npath=org/repo.git\n\n`);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe(`username=oauth2\npassword=${t.access_token}\npassword_expiry_utc=${expiry}\n`);
    }
    expect(refreshes(h.emu)).toBe(0);
  });

  it('get prints nothing for another scheme, host or port, and exits 0', async () => {
    await seedSignIn(h);
    for (const input of [
      `protocol=https\nhost=${base.host}\n\n`,
      `protocol=http\nhost=localhost:${base.port}\n\n`,
      `protocol=http\nhost=127.0.0.1:${Number(base.port) + 1}\n\n`,
      'protocol=http\nhost=127.0.0.1\n\n',
      `protocol=http\nhost=evil.example@${base.host}\n\n`,
      `url=http://evil.example/?${base.host}\n\n`,
      `url=http://${base.host}\\@evil.example/\n\n`,
      `protocol=http\nhost=evil.example\nurl=http://${base.host}/\n\n`,
      `\nprotocol=http\nhost=${base.host}\n`,
      `protocol=http\n\n`,
      '',
    ]) {
      const r = await get(input);
      expect(r.code, input).toBe(0);
      expect(r.stdout, input).toBe('');
      expect(r.stderr, input).toBe('');
    }
  });

  it('get reads CRLF lines, a url= attribute, unknown attributes, and input without an empty line', async () => {
    const t = await seedSignIn(h);
    for (const input of [
      `protocol=http\r\nhost=${base.host}\r\n\r\n`,
      `url=${h.emu.baseUrl}/org/repo.git\n\n`,
      `capability[]=state\nwwwauth[]=Basic realm="git"\nfuture=1\nprotocol=http\nhost=${base.host}\n\n`,
      `protocol=http\nhost=${base.host}`,
    ]) {
      const r = await get(input);
      expect(r.code, r.stderr).toBe(0);
      expect(attributes(r.stdout), JSON.stringify(input)).toMatchObject({ password: t.access_token });
    }
  });

  it('get prints nothing when the input is cut at its cap before its empty line or its end', async () => {
    await seedSignIn(h);
    // What arrived by the cap ends in the middle of `url=http://HOST:PORT@evil.example/repo`.
    const padding = 'wwwauth[]=Basic realm="git"\n'.repeat(Math.ceil((64 * 1024) / 28));
    for (const tail of [`url=${h.emu.baseUrl}`, `protocol=http\nhost=${base.host}`]) {
      const r = await get(`${padding}${tail}`);
      expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    }
    // Under the cap, the same lines get the answer.
    const r = await get(`wwwauth[]=Basic realm="git"\nurl=${h.emu.baseUrl}\n\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toBe('');
  });

  it('get with capability[]=authtype answers a Bearer credential', async () => {
    const t = await seedSignIn(h);
    const r = await get(`capability[]=authtype\nprotocol=http\nhost=${base.host}\n\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(attributes(r.stdout)).toMatchObject({
      'capability[]': 'authtype',
      authtype: 'Bearer',
      credential: t.access_token,
    });
    expect(attributes(r.stdout).password).toBeUndefined();
  });

  it('get refreshes an expired token; without a sign-in it says so and exits 3', async () => {
    const t = await seedSignIn(h, -1);
    const r = await get(`protocol=http\nhost=${base.host}\n\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(refreshes(h.emu)).toBe(1);
    const password = attributes(r.stdout).password!;
    expect(password).not.toBe(t.access_token);
    expect(await accepted(h.emu, password)).toBe(true);
    expectNoSecrets(h, [password]);

    await h.command(['logout']);
    const out = await get(`protocol=http\nhost=${base.host}\n\n`);
    expect(out.code).toBe(3);
    expect(out.stdout).toBe('');
    expectOneErrorLine(out, /not logged in; run `idcli login`/);
  });

  it('erase of the stored token makes the next get refresh; store changes nothing', async () => {
    const t = await seedSignIn(h);
    const stored = await h.record();
    const kept = await h.command(
      ['credential', 'git', 'store'],
      {},
      { stdin: `protocol=http\nhost=${base.host}\nusername=oauth2\npassword=${t.access_token}\n\n` },
    );
    expect(kept).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await h.record()).toEqual(stored);

    // An erase of a token that is no longer the stored one (another idcli refreshed since) leaves the record alone.
    const other = await h.command(
      ['credential', 'git', 'erase'],
      {},
      { stdin: `protocol=http\nhost=${base.host}\nusername=oauth2\npassword=other\n\n` },
    );
    expect(other).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await h.record()).toEqual(stored);
    // Nor does one that names no token at all.
    const unnamed = await h.command(
      ['credential', 'git', 'erase'],
      {},
      { stdin: `protocol=http\nhost=${base.host}\nusername=oauth2\n\n` },
    );
    expect(unnamed).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await h.record()).toEqual(stored);

    const erased = await h.command(
      ['credential', 'git', 'erase'],
      {},
      { stdin: `protocol=http\nhost=${base.host}\nusername=oauth2\npassword=${t.access_token}\n\n` },
    );
    expect(erased).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect((await h.record())!.expiresAt).toBeLessThanOrEqual(Date.now());
    const r = await get(`protocol=http\nhost=${base.host}\n\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(refreshes(h.emu)).toBe(1);
    expect(attributes(r.stdout).password).not.toBe(t.access_token);
  });

  it('erase for another host leaves the stored token alone', async () => {
    const t = await seedSignIn(h);
    const stored = await h.record();
    const r = await h.command(
      ['credential', 'git', 'erase'],
      {},
      { stdin: `protocol=http\nhost=elsewhere.example\npassword=${t.access_token}\n\n` },
    );
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(await h.record()).toEqual(stored);
  });
});

it('with IDCLI_ACCESS_TOKEN, get answers with it and no store is read; erase does nothing', async () => {
  const h = await harness({ recordItems: 0 });
  try {
    const host = new URL(h.emu.baseUrl).host;
    // A store setting that would fail (exit 2) if any store were opened.
    const env = {
      IDCLI_ACCESS_TOKEN: 'from-env',
      IDCLI_CREDENTIAL_STORE: 'keychain',
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent',
    };
    const r = await h.command(['credential', 'git', 'get'], env, { stdin: `protocol=http\nhost=${host}\n\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('username=oauth2\npassword=from-env\n');
    const erased = await h.command(['credential', 'git', 'erase'], env, {
      stdin: `protocol=http\nhost=${host}\npassword=from-env\n\n`,
    });
    expect(erased).toMatchObject({ code: 0, stdout: '', stderr: '' });
  } finally {
    await h.close();
  }
});

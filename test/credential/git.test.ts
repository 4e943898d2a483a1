/**
 * `idcli credential git`: git's credential helper protocol through the built CLI, and real git cloning over smart
 * HTTP from a loopback server that lets in only a token the emulator still accepts.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachStore, expectNoSecrets, harness, type Harness } from '../auth/harness.js';
import { expectOneErrorLine, IDCLI } from '../support/cli.js';
import { gitEnv, type GitServer, makeRepo, startGitServer } from './git-server.js';
import { accepted, refreshes, seedSignIn } from './support.js';

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
    h = await harness({ store });
    base = new URL(h.emu.baseUrl);
    // Another port of the same host: an origin of its own, which the token may go to only by being api-base-url.
    api = new URL('http://127.0.0.1:1/');
  });
  afterEach(async () => {
    await h?.close();
  });

  const get = (input: string, extra: Record<string, string | undefined> = {}) =>
    h.run(['credential', 'git', 'get'], { IDCLI_API_BASE_URL: api.origin, ...extra }, { input });

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

    await h.run(['logout']);
    const out = await get(`protocol=http\nhost=${base.host}\n\n`);
    expect(out.code).toBe(3);
    expect(out.stdout).toBe('');
    expectOneErrorLine(out, /not logged in; run `idcli login`/);
  });

  it('erase of the stored token makes the next get refresh; store changes nothing', async () => {
    const t = await seedSignIn(h);
    const stored = await h.record();
    const kept = await h.run(
      ['credential', 'git', 'store'],
      {},
      { input: `protocol=http\nhost=${base.host}\nusername=oauth2\npassword=${t.access_token}\n\n` },
    );
    expect(kept).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await h.record()).toEqual(stored);

    // An erase of a token that is no longer the stored one (another idcli refreshed since) leaves the record alone.
    const other = await h.run(
      ['credential', 'git', 'erase'],
      {},
      { input: `protocol=http\nhost=${base.host}\nusername=oauth2\npassword=other\n\n` },
    );
    expect(other).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await h.record()).toEqual(stored);

    const erased = await h.run(
      ['credential', 'git', 'erase'],
      {},
      { input: `protocol=http\nhost=${base.host}\nusername=oauth2\npassword=${t.access_token}\n\n` },
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
    const r = await h.run(
      ['credential', 'git', 'erase'],
      {},
      { input: `protocol=http\nhost=elsewhere.example\npassword=${t.access_token}\n\n` },
    );
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(await h.record()).toEqual(stored);
  });
});

it('with IDCLI_ACCESS_TOKEN, get answers with it and no store is read; erase does nothing', async () => {
  const h = await harness();
  try {
    const host = new URL(h.emu.baseUrl).host;
    // A store setting that would fail (exit 2) if any store were opened.
    const env = {
      IDCLI_ACCESS_TOKEN: 'from-env',
      IDCLI_CREDENTIAL_STORE: 'keychain',
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent',
    };
    const r = await h.run(['credential', 'git', 'get'], env, { input: `protocol=http\nhost=${host}\n\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('username=oauth2\npassword=from-env\n');
    const erased = await h.run(['credential', 'git', 'erase'], env, {
      input: `protocol=http\nhost=${host}\npassword=from-env\n\n`,
    });
    expect(erased).toMatchObject({ code: 0, stdout: '', stderr: '' });
  } finally {
    await h.close();
  }
});

describeEachStore('git clone with idcli as its credential helper', (store) => {
  let h: Harness;
  let server: GitServer;
  let home: string;
  beforeEach(async () => {
    h = await harness({ store });
    home = join(h.dir, 'home');
    await mkdir(home);
    const root = join(h.dir, 'repos');
    await mkdir(root);
    makeRepo(root, 'repo.git', home);
    server = await startGitServer(root, home, (password) => accepted(h.emu, password));
  });
  afterEach(async () => {
    await server?.close();
    await h?.close();
  });

  /** `git clone` of the served repository into `dest`, idcli the only helper, the API at the git server. */
  const clone = (dest: string) =>
    git(
      [
        '-c',
        'credential.helper=',
        '-c',
        `credential.helper=!${IDCLI} credential git`,
        'clone',
        '-q',
        `${server.url}/repo.git`,
        join(h.dir, dest),
      ],
      h.env({ ...gitEnv(home), IDCLI_API_BASE_URL: server.url }),
    );

  it('clones with the stored access token', async () => {
    const t = await seedSignIn(h);
    const r = await clone('one');
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(join(h.dir, 'one', 'README'), 'utf8')).toBe('hello\n');
    expect(server.passwords).toContain(t.access_token);
    expect(refreshes(h.emu)).toBe(0);
  });

  it('a token the server no longer takes is erased by git, and the next clone refreshes', async () => {
    const t = await seedSignIn(h);
    h.emu.expireAccessTokens();
    const refused = await clone('one');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/Authentication failed/);
    expect((await h.record())!.expiresAt).toBeLessThanOrEqual(Date.now());

    const r = await clone('two');
    expect(r.code, r.stderr).toBe(0);
    expect(refreshes(h.emu)).toBe(1);
    const fresh = (await h.record())!.accessToken!;
    expect(fresh).not.toBe(t.access_token);
    expect(server.passwords.at(-1)).toBe(fresh);
  });

  it('no token goes to a git server on another origin', async () => {
    await seedSignIn(h);
    const r = await git(
      [
        '-c',
        'credential.helper=',
        '-c',
        `credential.helper=!${IDCLI} credential git`,
        'clone',
        '-q',
        `${server.url}/repo.git`,
        join(h.dir, 'x'),
      ],
      h.env({ ...gitEnv(home) }),
    );
    expect(r.code).not.toBe(0);
    expect(server.passwords).toEqual([]);
  });
});

function git(args: string[], env: Record<string, string | undefined>): Promise<{ code: number; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv;
  return new Promise((resolve) => {
    execFile('git', args, { env: clean, timeout: 60_000 }, (err, _stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr });
    });
  });
}

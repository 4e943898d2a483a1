// Needs a process: git runs idcli as its credential helper, a command of its own, for each clone.
/**
 * Real git cloning over smart HTTP with the built CLI as its credential helper, from a loopback server that lets in
 * only a token the emulator still accepts.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachStore, harness, type Harness } from '../support/harness.js';
import { IDCLI } from '../support/cli.js';
import { gitEnv, type GitServer, makeRepo, startGitServer } from '../support/git-server.js';
import { accepted, refreshes, seedSignIn } from '../support/credential.js';

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

  /**
   * `git clone` of the served repository into `dest`, idcli the only helper, with `api` in its environment (the API
   * at the git server unless told).
   */
  const clone = (dest: string, api: Record<string, string> = { IDCLI_API_BASE_URL: server.url }) =>
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
      h.env({ ...gitEnv(home), ...api }),
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
    const r = await clone('x', {});
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

// Needs a process: the README's recipes run as written, as scripts under a real bash calling `idcli`.
/**
 * The README's "Using idcli in CI" recipes, run as written: each script is read from README.md (the fenced block
 * after its `<!-- ci-recipe: NAME -->` marker), so the README and this test cannot drift apart. Every script runs
 * as a file under bash, with the BUILT CLI on PATH as `idcli`, against the emulator.
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  authorizeUrlIn,
  browse,
  describeEachStore,
  expectNoSecrets,
  type Harness,
  harness,
  storeLogin,
} from '../support/harness.js';
import { sha256 } from '../support/hash.js';
import { until } from '../support/until.js';
import { ndjson, plainItems } from '../support/list.js';
import { BIN, ROOT } from '../support/cli.js';
import { onTerminal } from '../support/pty.js';
import { type CiRecipe, readRecipe } from '../support/readme-recipes.js';
import { gitEnv, makeRepo, startGitServer } from '../support/git-server.js';
import { accepted, KUBE_API_ANSWER, refreshes, seedSignIn, startKubeApi } from '../support/credential.js';

const README = await readFile(join(ROOT, 'README.md'), 'utf8');
const recipe = (name: string): CiRecipe => readRecipe(README, name);

const USER = '{\n  "id": 42,\n  "name": "Ada"\n}\n';
const USERS = plainItems(250, 'u');

let h: Harness | undefined;
afterEach(async () => {
  try {
    if (h) {
      // No recipe puts a token, code or verifier into a job's log.
      expectNoSecrets(h);
      expect(h.emu.errors).toEqual([]);
    }
  } finally {
    await h?.close();
    h = undefined;
  }
});

/** An emulator with the user and the collection the recipes fetch, and a directory holding `idcli` for PATH. */
async function setUp(store: 'file' | 'keychain' = 'file'): Promise<Harness> {
  // Like many real APIs, the service serves at most 100 items a page whatever is asked: a dump of USERS takes several
  // pages, so a walk can stop between them.
  h = await harness({ store, maxPageSize: 100, overMaxPageSize: 'cap', recordItems: 0 });
  h.emu.setResource('/v1/users/42', USER);
  h.emu.setCollection('/v1/users', { type: 'offset', items: USERS });
  const bin = join(h.dir, 'bin');
  await mkdir(bin);
  await symlink(BIN, join(bin, 'idcli'));
  return h;
}

/** The environment of a CI job: the settings as a runner provides them, `idcli` on PATH, CI=true as runners set. */
function jobEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return h!.env({
    PATH: `${join(h!.dir, 'bin')}:${process.env.PATH}`,
    IDCLI_API_BASE_URL: `${h!.emu.baseUrl}/v1`,
    CI: 'true',
    ...extra,
  });
}

interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
  dir: string;
}

/** Writes `script` to `<dir>/script.sh` and runs it with bash in `dir`, as a CI step runs its script. */
async function runScript(script: string, dir: string, env: Record<string, string | undefined>): Promise<ScriptRun> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'script.sh'), script);
  const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv;
  const child = spawn('bash', ['script.sh'], { cwd: dir, env: clean, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  h!.outputs.push(stdout, stderr);
  return { code, stdout, stderr, dir };
}

const file = (run: ScriptRun, name: string) => readFile(join(run.dir, name), 'utf8');

function refreshEvents() {
  return h!.emu.tokenEvents.filter((e) => e.grant === 'refresh_token');
}

/**
 * The one-time sign-in of the self-hosted recipe, as the person does it over SSH: the README's commands run on a
 * pseudo-terminal in an SSH session without $BROWSER, the browser on "their laptop" (the test's HTTP browser)
 * signs in and ends on the callback address, which does not load there, and that address is typed at the question.
 */
async function signInOnceOverSsh(): Promise<void> {
  const dir = join(h!.dir, 'ssh-session');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'script.sh'), recipe('self-hosted-sign-in').text);
  const env = jobEnv({ SSH_CONNECTION: '192.0.2.10 50022 192.0.2.20 22', BROWSER: undefined, CI: undefined });
  let raw = '';
  let type: ((keys: string) => void) | undefined;
  const done = onTerminal(`cd "${dir}" && exec bash script.sh`, {
    env,
    columns: 200,
    onOutput: (soFar) => (raw = soFar),
    keyboard: (keys) => (type = keys),
  });
  const question = 'Paste the address the browser ended on:';
  const url = await until(() => (raw.includes(question) ? authorizeUrlIn(raw) : undefined), 20_000, 'the question');
  const landed = join(h!.dir, 'landed.url');
  expect(await browse(url.href, h!.env({ HTTP_BROWSER_ACTION: 'remote', HTTP_BROWSER_LANDED: landed }))).toBe(0);
  const address = await readFile(landed, 'utf8');
  type!(`${address}\r`);
  const r = await done;
  // The terminal shows the address as it was typed; nothing else of it may appear.
  h!.outputs.push(r.raw.split(address).join('<typed>'));
  expect(r.code, r.raw).toBe(0);
  expect(r.raw).toContain('Not opening a browser: this is an SSH session');
  expect(r.raw).toContain('Signed in');
}

describe('README "Using idcli in CI": the recipes as written', () => {
  it('every shell recipe starts with `set -euo pipefail`, and none passes a token through a command line', () => {
    for (const name of ['self-hosted-job', 'trusted-step', 'throwaway-job', 'retry', 'git-helper', 'exec-step']) {
      const r = recipe(name);
      expect(r.lang, name).toBe('sh');
      expect(r.text.split('\n')[0], name).toBe('set -euo pipefail');
      expect(r.text, name).not.toMatch(/\$\(idcli token/);
    }
  });
});

// The store-dependent behaviour of these commands is tested with each store in test/commands/credential/; here the README's
// text is what is tested, with the file store.
describe('README "Using the token with other tools": the snippets as written', () => {
  it('kubectl, with the kubeconfig user of the README, reaches an API server that checks the ID token', async () => {
    await setUp('file');
    const t = await seedSignIn(h!);
    const api = await startKubeApi(h!);
    try {
      const snippet = recipe('kubeconfig-user');
      expect(snippet.lang).toBe('yaml');
      const kubeconfig = join(h!.dir, 'kubeconfig');
      const cluster = JSON.stringify({ server: api.url, 'certificate-authority': api.caFile });
      await writeFile(
        kubeconfig,
        `apiVersion: v1\nkind: Config\nclusters:\n  - name: c\n    cluster: ${cluster}\ncontexts:\n  - name: c\n    context: {cluster: c, user: idcli}\ncurrent-context: c\n${snippet.text}`,
      );
      const r = await runScript(`kubectl --kubeconfig '${kubeconfig}' get --raw /api\n`, join(h!.dir, 'kube'), {
        ...jobEnv({ HOME: h!.dir }),
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(KUBE_API_ANSWER);
      expect(new Set(api.seen)).toEqual(new Set([`Bearer ${t.id_token}`]));
    } finally {
      await api.close();
    }
  });

  it('git clones with idcli as its credential helper, set as the README says', async () => {
    await setUp('file');
    await seedSignIn(h!);
    const home = join(h!.dir, 'home');
    const repos = join(h!.dir, 'repos');
    await mkdir(join(repos, 'org'), { recursive: true });
    await mkdir(home);
    makeRepo(join(repos, 'org'), 'repo.git', home);
    const server = await startGitServer(repos, home, (password) => accepted(h!.emu, password));
    try {
      const r = await runScript(
        recipe('git-helper').text,
        join(h!.dir, 'job'),
        jobEnv({ ...gitEnv(home), IDCLI_API_BASE_URL: server.url }),
      );
      expect(r.code, r.stderr).toBe(0);
      expect(await readFile(join(r.dir, 'repo', 'README'), 'utf8')).toBe('hello\n');
      expect(new Set(server.passwords)).toEqual(new Set([(await h!.record())!.accessToken]));
    } finally {
      await server.close();
    }
  });

  it('idcli exec gives the step a token that curl reads from a pipe', async () => {
    await setUp('file');
    const t = await seedSignIn(h!, 300);
    const r = await runScript(recipe('exec-step').text, join(h!.dir, 'exec'), jobEnv());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(await file(r, 'user.json')).toBe(USER);
    // --min-ttl 600 with 300 s left: refreshed first.
    expect(refreshes(h!.emu)).toBe(1);
    expect((await h!.record())!.accessToken).not.toBe(t.access_token);
  });
});

// File store only: choosing it is the point of this recipe (a runner's service account has no unlocked keychain,
// and the recipe sets IDCLI_CREDENTIAL_STORE=file). Concurrent refreshes in the keychain store are covered by
// test/e2e/refresh-concurrency.test.ts.
describe('a runner that keeps its disk: one sign-in, shared by jobs running at once', () => {
  it('three concurrent jobs all succeed, the refresh runs under the lock, no refresh token is used twice', async () => {
    await setUp('file');
    await signInOnceOverSsh();
    expect(await readdir(join(h!.dir, 'config', 'credentials'))).toHaveLength(1);
    // The jobs start after the access token expired: each needs a refresh unless a neighbour just did one.
    const record = (await h!.record())!;
    await h!.writeRecord({ ...record, expiresAt: Date.now() - 1000 });

    const job = recipe('self-hosted-job').text;
    const runs = await Promise.all([1, 2, 3].map((n) => runScript(job, join(h!.dir, `job-${n}`), jobEnv())));
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(0);
      // CI=true and --quiet: nothing on stderr, not even the keychain notice.
      expect(r.stderr).toBe('');
      expect(await file(r, 'user.json')).toBe(USER);
      expect(await file(r, 'user-again.json')).toBe(USER);
      expect(await file(r, 'users.ndjson')).toBe(ndjson(USERS));
    }
    // One job refreshed; the others waited for the lock and took its token.
    expect(refreshEvents()).toHaveLength(1);
    // The emulator refuses a refresh token presented twice (and flags it as reuse); none was.
    expect(refreshEvents().filter((e) => !e.ok || e.reuse)).toEqual([]);
    expect((await h!.record())!.generation).toBe(record.generation + 1);

    // Next, the service refuses the token before its time (revoked, say): each job's first request gets a 401,
    // and again one refresh serves all three.
    h!.emu.expireAccessTokens();
    const again = await Promise.all([4, 5, 6].map((n) => runScript(job, join(h!.dir, `job-${n}`), jobEnv())));
    for (const r of again) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
      expect(await file(r, 'users.ndjson')).toBe(ndjson(USERS));
    }
    expect(refreshEvents()).toHaveLength(2);
    expect(refreshEvents().filter((e) => !e.ok || e.reuse)).toEqual([]);

    // A runner that gives the job a terminal: with CI=true and --quiet, nothing reaches it (no progress line).
    const dir = join(h!.dir, 'job-on-terminal');
    await mkdir(dir);
    await writeFile(join(dir, 'script.sh'), job);
    const tty = await onTerminal(`cd '${dir}' && bash script.sh`, { env: jobEnv() });
    expect(tty.code).toBe(0);
    expect(tty.raw).toBe('');
    expect(await readFile(join(dir, 'users.ndjson'), 'utf8')).toBe(ndjson(USERS));
  }, 120_000);
});

describeEachStore('throwaway runners: an access token from a trusted step', (store) => {
  it('the job runs `api` and `list` with IDCLI_ACCESS_TOKEN alone, touching no store; expired, it exits 3', async () => {
    await setUp(store);
    await storeLogin(h!);

    const trusted = await runScript(recipe('trusted-step').text, join(h!.dir, 'trusted'), jobEnv());
    expect(trusted.code, trusted.stderr).toBe(0);
    const handed = JSON.parse(await file(trusted, 'token.json')) as { access_token: string; expires_at: string };
    // The log shows when the token expires, and no token.
    expect(trusted.stdout).toBe(`${handed.expires_at}\n`);
    expect(Date.parse(handed.expires_at) - Date.now()).toBeGreaterThan(1800 * 1000 - 60_000);

    // The throwaway runner: a config directory that was never used, no D-Bus, and a store setting that would fail
    // (exit 2) if any store were opened.
    const empty = join(h!.dir, 'throwaway-config');
    const throwaway = jobEnv({
      IDCLI_ACCESS_TOKEN: handed.access_token,
      IDCLI_CONFIG_DIR: empty,
      IDCLI_CREDENTIAL_STORE: 'keychain',
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/idcli-throwaway',
      BROWSER: undefined,
    });
    const job = recipe('throwaway-job').text;
    const tokenRequests = h!.emu.tokenEvents.length;
    const r = await runScript(job, join(h!.dir, 'throwaway'), throwaway);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(await file(r, 'user.json')).toBe(USER);
    expect(await file(r, 'users.ndjson')).toBe(ndjson(USERS));
    expect(h!.emu.tokenEvents.length).toBe(tokenRequests); // never refreshed
    expect(await readdir(empty).catch(() => [])).toEqual([]);

    // Past its expiry the token is refused: exit 3, the first command stops the script.
    h!.emu.expireAccessTokens();
    const late = await runScript(job, join(h!.dir, 'throwaway-late'), throwaway);
    expect(late.code).toBe(3);
    expect(h!.emu.tokenEvents.length).toBe(tokenRequests);

    // That runner could not have served a stored sign-in: without the variable, idcli asks for the keychain (exit 2).
    const storeNeeded = await runScript('idcli list users\n', join(h!.dir, 'throwaway-store'), {
      ...throwaway,
      IDCLI_ACCESS_TOKEN: undefined,
    });
    expect(storeNeeded.code).toBe(2);
    expect(storeNeeded.stderr).toContain('keychain unavailable');

    // Without the variable, the script says what is missing before idcli runs.
    const unset = await runScript(job, join(h!.dir, 'throwaway-unset'), {
      ...throwaway,
      IDCLI_ACCESS_TOKEN: undefined,
    });
    expect(unset.code).not.toBe(0);
    expect(unset.stderr).toContain('IDCLI_ACCESS_TOKEN: the trusted step sets it');
  }, 120_000);
});

// The store plays no part in these: the retry decision and the resume are the same whichever store holds the
// sign-in, so they run with the file store.
describe('in the job', () => {
  it('retry: exit 4 is tried again, exit 3 is not', async () => {
    await setUp('file');
    await storeLogin(h!);
    const script = recipe('retry').text;
    h!.emu.inject({ path: '/v1/users/42', fault: { kind: 'status', status: 500 } });
    const r = await runScript(script, join(h!.dir, 'retry'), jobEnv({ RETRY_DELAY: '0' }));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('exit 4, attempt 1 of 3');
    expect(await file(r, 'user.json')).toBe(USER);
    expect(h!.emu.requests.filter((q) => q.path === '/v1/users/42')).toHaveLength(2);

    expect((await h!.run(['logout'])).code).toBe(0);
    const signedOut = await runScript(script, join(h!.dir, 'retry-signed-out'), jobEnv({ RETRY_DELAY: '0' }));
    expect(signedOut.code).toBe(3);
    expect(signedOut.stderr).not.toContain('attempt');
    expect(h!.emu.requests.filter((q) => q.path === '/v1/users/42')).toHaveLength(2);
  }, 120_000);

  it('retry: a dump that fails twice mid-walk continues on each attempt and completes on the third, byte-identical', async () => {
    await setUp('file');
    await storeLogin(h!);
    // A cursor walk goes one page at a time, so the requests tell where each attempt stops: the first one fails at
    // its third page, the second attempt at its second (the fifth request since the faults were queued).
    const users = plainItems(6000, 'u');
    h!.emu.setCollection('/v1/users', { type: 'cursor', items: users });
    const clean = await runScript('idcli list users\n', join(h!.dir, 'clean'), jobEnv());
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stdout).toBe(ndjson(users));
    const pages = h!.emu.requests.filter((q) => q.path === '/v1/users').length;
    expect(pages).toBeGreaterThanOrEqual(4);

    h!.emu.inject({ path: '/v1/users', nth: 3, fault: { kind: 'status', status: 500 } });
    h!.emu.inject({ path: '/v1/users', nth: 5, fault: { kind: 'status', status: 500 } });
    const before = h!.emu.requests.length;
    const r = await runScript(recipe('retry').text, join(h!.dir, 'retry-dump'), jobEnv({ RETRY_DELAY: '0' }));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('exit 4, attempt 1 of 3');
    expect(r.stderr).toContain('exit 4, attempt 2 of 3');
    expect(r.stderr).not.toContain('attempt 3 of 3');
    expect(r.stderr).toMatch(/stopped after \d+ items in users\.ndjson; run the same command again to continue/);
    expect(r.stderr.match(/resuming users\.ndjson after \d+ items/g)).toHaveLength(2);
    const dumped = await readFile(join(r.dir, 'users.ndjson'));
    expect(sha256(dumped)).toBe(sha256(Buffer.from(clean.stdout)));
    // No page was fetched twice: every page once, and the two failed requests.
    const walked = h!.emu.requests.slice(before).filter((q) => q.path === '/v1/users');
    expect(walked).toHaveLength(pages + 2);
    await expect(readFile(join(r.dir, 'users.ndjson.idcli-state'))).rejects.toThrow();
    expect(await file(r, 'user.json')).toBe(USER);
  }, 120_000);

  it('a dump that stopped early: the same command, run again, completes the file exactly', async () => {
    const { commands, said } = await resumeRecipe('resume');
    expect(commands[1]).toBe(commands[0]);
    expect(commands[0]).toMatch(/ -o users\.ndjson$/);

    const dir = join(h!.dir, 'resume');
    const first = await stoppedAtThirdPage(commands[0]!, dir);
    // What idcli said has the README's form, with the count where it stopped.
    const asSaid = (line: string) => new RegExp(`^${escape(line).replace('200', '\\d+')}$`, 'm');
    expect(first.stderr).toMatch(asSaid(said[0]!));
    h!.emu.clearFaults();
    const rest = await runScript(commands[1]!, dir, jobEnv());
    expect(rest.code, rest.stderr).toBe(0);
    expect(rest.stderr).toMatch(asSaid(said[1]!));
    expect(await file(rest, 'users.ndjson')).toBe(ndjson(USERS));
  }, 120_000);

  it('into a pipeline: the printed command, appended with >>, completes the file exactly', async () => {
    const { commands, said: saidLines } = await resumeRecipe('resume-stdout');
    const said = saidLines[0]!;
    // The README's transcript: the second command is the one printed, with `>> users.ndjson` after it.
    const printedCommand = said.slice(said.indexOf('resume with: ') + 'resume with: '.length);
    expect(commands[1]).toBe(`${printedCommand} >> users.ndjson`);

    const dir = join(h!.dir, 'resume-stdout');
    const first = await stoppedAtThirdPage(commands[0]!, dir);
    // What idcli said has the README's form, with this emulator's URL and the count where it stopped.
    const pattern = new RegExp(
      `^${escape(said).replace(escape("'https://api.example.com/v1/users?pageIndex=2&pageSize=100'"), "'[^']+'").replace('200', '\\d+')}$`,
      'm',
    );
    expect(first.stderr).toMatch(pattern);
    const resume = /resume with: (.+)$/m.exec(first.stderr)![1]!;
    expect((await file(first, 'users.ndjson')).length).toBeGreaterThan(0);

    h!.emu.clearFaults();
    const rest = await runScript(`${resume} >> users.ndjson`, dir, jobEnv());
    expect(rest.code, rest.stderr).toBe(0);
    expect(await file(rest, 'users.ndjson')).toBe(ndjson(USERS));
  }, 120_000);
});

/**
 * Signs in (file store) and reads README recipe `name`, a transcript of two commands: the commands (after "$ ")
 * and the lines idcli said, without empty ones.
 */
async function resumeRecipe(name: string): Promise<{ commands: string[]; said: string[] }> {
  await setUp('file');
  await storeLogin(h!);
  const lines = recipe(name).text.split('\n');
  const commands = lines.filter((l) => l.startsWith('$ ')).map((l) => l.slice(2));
  expect(commands).toHaveLength(2);
  return { commands, said: lines.filter((l) => l !== '' && !l.startsWith('$ ')) };
}

/** Runs `command` in `dir` while every request for users from the third on fails with 500: it stops (exit 4). */
async function stoppedAtThirdPage(command: string, dir: string): Promise<ScriptRun> {
  h!.emu.inject({ path: '/v1/users', nth: 3, times: Number.POSITIVE_INFINITY, fault: { kind: 'status', status: 500 } });
  const first = await runScript(command, dir, jobEnv());
  expect(first.code).toBe(4);
  return first;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// The fleet recipe against a real three-member etcd cluster: the administrator's role commands, the sign-in from a
// laptop, and jobs on several runners at once, each a machine of its own (HOME and config directory).
describe('a fleet that shares one sign-in through etcd', () => {
  it('the role recipe, a sign-in from the laptop, then jobs on four runners at once: one refresh, no reuse', async () => {
    const { startEtcdCluster } = await import('../support/etcd-cluster.js');
    const cluster = await startEtcdCluster();
    try {
      await setUp('file');
      const secrets = { ETCD_ROOT_PASSWORD: 'root-pw-31c8e2', IDCLI_FLEET_PASSWORD: 'fleet-pw-90be47' };
      const admin = await runScript(recipe('fleet-role').text, join(h!.dir, 'admin'), {
        PATH: process.env.PATH,
        ETCDCTL_API: '3',
        ETCDCTL_ENDPOINTS: cluster.endpoints,
        ...secrets,
      });
      expect(admin.code, admin.stderr).toBe(0);
      expect(cluster.ctl(['--user', `root:${secrets.ETCD_ROOT_PASSWORD}`, 'auth', 'status'])).toContain('true');

      const machine = async (name: string, extra: Record<string, string | undefined> = {}) => {
        const home = join(h!.dir, name);
        await mkdir(join(home, 'config'), { recursive: true, mode: 0o700 });
        return jobEnv({
          HOME: home,
          IDCLI_CONFIG_DIR: join(home, 'config'),
          IDCLI_ETCD_ENDPOINTS: cluster.endpoints,
          IDCLI_ETCD_USER: `idcli-fleet:${secrets.IDCLI_FLEET_PASSWORD}`,
          ...extra,
        });
      };
      const laptop = await runScript(recipe('fleet-sign-in').text, join(h!.dir, 'laptop'), await machine('laptop'));
      expect(laptop.code, laptop.stderr).toBe(0);
      expect(laptop.stderr).toContain('Signed in');
      expect(laptop.stdout).toContain('etcd');
      // The record is under /idcli/, readable by the fleet's user; the laptop keeps nothing of it.
      const keys = cluster.ctl([
        '--user',
        `root:${secrets.ETCD_ROOT_PASSWORD}`,
        'get',
        '--prefix',
        '--keys-only',
        '/idcli/',
      ]);
      expect(keys).toContain(`/idcli/default|${h!.emu.client.id}|`);
      expect(await readdir(join(h!.dir, 'laptop', 'config'))).not.toContain('credentials');

      const job = recipe('fleet-job').text;
      const first = await Promise.all(
        [1, 2, 3, 4].map(async (n) => runScript(job, join(h!.dir, `runner-${n}`), await machine(`runner-${n}`))),
      );
      for (const r of first) {
        expect(r.code, r.stderr).toBe(0);
        expect(await file(r, 'user.json')).toBe(USER);
        expect(await file(r, 'users.ndjson')).toBe(ndjson(USERS));
      }
      expect(refreshEvents()).toHaveLength(0);

      // The next jobs start after the access token expired: the fleet takes turns on the refresh.
      const { EtcdStore } = await import('../../src/store/etcd-store.js');
      const store = new EtcdStore({
        endpoints: cluster.endpoints.split(','),
        prefix: '/idcli/',
        user: { name: 'idcli-fleet', password: secrets.IDCLI_FLEET_PASSWORD },
      });
      try {
        const record = (await store.read(h!.key()))!;
        await store.write(h!.key(), { ...record, expiresAt: Date.now() - 1000 });
      } finally {
        store.close();
      }
      const again = await Promise.all(
        [5, 6, 7, 8].map(async (n) => runScript(job, join(h!.dir, `runner-${n}`), await machine(`runner-${n}`))),
      );
      for (const r of again) expect(r.code, r.stderr).toBe(0);
      // One runner refreshed; the others waited for the lock and took its token.
      expect(refreshEvents()).toHaveLength(1);
      expect(refreshEvents().filter((e) => !e.ok || e.reuse)).toEqual([]);
      for (const r of [laptop, ...first, ...again]) {
        expect(r.stdout + r.stderr).not.toContain(secrets.IDCLI_FLEET_PASSWORD);
      }
    } finally {
      await cluster.close();
    }
  }, 180_000);
});

/**
 * The private-path rule (docs/cli.md, "Private files") for the config directory and the locks directory, with each
 * credential store: a directory that another user (`nobody`, really running mkdir and writing config.json through
 * setpriv) made is refused before any request, and no token leaves, whatever store holds the sign-in.
 */
import { execFile } from 'node:child_process';
import { chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, it } from 'vitest';
import { CONFIG_DIR_OWN } from '../src/config-file.js';
import { describeEachStore, type Harness, harness, type StoreKind, storeLogin } from './support/harness.js';

const run = promisify(execFile);
const ROOT_USER = process.getuid?.() === 0;
const NOBODY = 65534;

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function newHarness(store: StoreKind): Promise<Harness> {
  const h = await harness({ store, recordItems: 0 });
  cleanups.push(() => h.close());
  return h;
}

/** A server of nobody's on loopback that records what reaches it. */
async function bystander(): Promise<{ url: string; seen: string[] }> {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, seen };
}

async function asNobody(...args: string[]): Promise<void> {
  await run('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...args]);
}

describeEachStore('a config directory of another user', (store) => {
  it.runIf(ROOT_USER)('is exit 2 before any request, naming it and its owner; the token goes nowhere', async () => {
    const h = await newHarness(store);
    await storeLogin(h);
    const other = await bystander();
    const shared = await mkdtemp(join(tmpdir(), 'idcli-shared-'));
    cleanups.push(() => rm(shared, { recursive: true, force: true }));
    await run('chmod', ['1777', shared]);
    const g = join(shared, 'g');
    await asNobody('mkdir', '-m', '0777', g);
    const config = JSON.stringify({ profiles: { default: { 'api-base-url': other.url } } });
    await asNobody('sh', '-c', `umask 0; printf '%s' '${config}' > '${g}/config.json'`);
    const before = h.emu.requests.length;
    for (const extra of [{}, { IDCLI_ACCESS_TOKEN: h.emu.mintTokens().access_token }]) {
      const r = await h.command(['api', '/v1/me'], { IDCLI_CONFIG_DIR: g, ...extra });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toBe(
        `error: refusing to use ${g}: it belongs to another user (uid ${NOBODY}), not to you (uid 0); use a config directory of your own (IDCLI_CONFIG_DIR), or have its owner hand it over (chown)\n`,
      );
      expect(r.stderr).not.toMatch(/tightened/);
    }
    expect(other.seen).toEqual([]);
    expect(h.emu.requests.slice(before)).toEqual([]);
  });
});

describeEachStore('a config directory under a directory of another user', (store) => {
  it.runIf(ROOT_USER)(
    'is exit 2 naming that directory and its owner, at any level above, and through a link of the user',
    async () => {
      const h = await newHarness(store);
      await storeLogin(h);
      const up = join(h.dir, 'up');
      const levels = [join(up, 'a'), join(up, 'a', 'b'), join(up, 'a', 'b', 'c')];
      const config = join(levels[2]!, 'config');
      await mkdir(levels[2]!, { recursive: true });
      await run('cp', ['-a', join(h.dir, 'config'), config]);
      await run('ln', ['-s', config, join(h.dir, 'mine')]);
      for (const foreign of levels) {
        await chown(foreign, NOBODY, NOBODY);
        const where = foreign === levels[2] ? `it is in ${foreign}` : `${foreign} is on the way to it`;
        for (const [named, args] of [
          [config, ['token']],
          [join(h.dir, 'mine'), ['status']],
          [config, ['config', 'set', 'scope', 'x']],
        ] as const) {
          const r = await h.command([...args], { IDCLI_CONFIG_DIR: named });
          expect(r.code, r.stderr).toBe(2);
          expect(r.stderr).toBe(
            `error: refusing to use ${named}: ${where}, and it belongs to uid ${NOBODY}; ${CONFIG_DIR_OWN}\n`,
          );
        }
        await chown(foreign, 0, 0);
      }
      const ok = await h.command(['token'], { IDCLI_CONFIG_DIR: join(h.dir, 'mine') });
      expect(ok.code, ok.stderr).toBe(0);
    },
  );
});

describeEachStore('a link to the config directory', (store) => {
  it.runIf(ROOT_USER)(
    "planted by nobody in a shared directory is refused; one of the user's own is followed",
    async () => {
      const h = await newHarness(store);
      await storeLogin(h);
      const shared = await mkdtemp(join(tmpdir(), 'idcli-shared-'));
      cleanups.push(() => rm(shared, { recursive: true, force: true }));
      await run('chmod', ['1777', shared]);
      const planted = join(shared, 'cfg');
      await asNobody('ln', '-s', join(h.dir, 'config'), planted);
      const r = await h.command(['token'], { IDCLI_CONFIG_DIR: planted });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(
        `refusing to follow the symbolic link ${planted}: it belongs to another user (uid ${NOBODY})`,
      );
      const own = join(h.dir, 'mine');
      await run('ln', ['-s', join(h.dir, 'config'), own]);
      const ok = await h.command(['token'], { IDCLI_CONFIG_DIR: own });
      expect(ok.code, ok.stderr).toBe(0);
    },
  );
});

describeEachStore('a locks directory of another user', (store) => {
  it.runIf(ROOT_USER)('is exit 2 naming it and its owner; no refresh token is sent', async () => {
    const h = await newHarness(store);
    await storeLogin(h);
    const locks = join(h.dir, 'config', 'locks');
    await mkdir(locks, { recursive: true });
    await chown(locks, NOBODY, NOBODY);
    const before = h.emu.tokenEvents.length;
    const r = await h.command(['token', '--refresh']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`refusing to use ${locks}: it belongs to another user (uid ${NOBODY})`);
    expect(h.emu.tokenEvents.slice(before)).toEqual([]);
  });
});

// Needs a process: what a command loads shows only in a process of the built CLI that starts with none.
/**
 * What `idcli token` with a cached token loads: scripts run it before every API call, so the terminal displays of
 * `list` and `login` (progress bar, countdown) must stay out of its path, and so must the Node modules that only
 * writes, refreshes and streams need: each costs milliseconds of start-up.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { describeEachStore, type Harness, harness, storeLogin } from '../support/harness.js';
import { ROOT } from '../support/cli.js';

const HOOK = join(ROOT, 'test', 'support', 'loaded-modules.cjs');
const DIST = join(ROOT, 'dist');

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The built chunks that hold the live terminal line. */
function statusLineChunks(): string[] {
  return readdirSync(DIST)
    .filter((f) => f.endsWith('.cjs'))
    .map((f) => join(DIST, f))
    .filter((f) => readFileSync(f, 'utf8').includes('function createStatusLine('));
}

async function loadedBy(
  args: string[],
  extra: Record<string, string | undefined> = {},
): Promise<{ code: number | null; stdout: string; files: string[] }> {
  const file = join(h!.dir, `loaded-${args[0]}.txt`);
  const r = await h!.run(args, { NODE_OPTIONS: `--require=${HOOK}`, LOADED_MODULES_FILE: file, ...extra });
  return { code: r.code, stdout: r.stdout, files: readFileSync(file, 'utf8').split('\n') };
}

describe('idcli token with a cached token', () => {
  it('loads none of the progress and countdown code', async () => {
    h = await harness({ recordItems: 0 });
    await storeLogin(h);
    const chunks = statusLineChunks();
    expect(chunks).toHaveLength(1);

    const token = await loadedBy(['token']);
    expect(token.code).toBe(0);
    expect(token.stdout).toMatch(/^\S+\n$/);
    expect(token.files).toContain(join(DIST, 'cli.cjs'));
    expect(token.files).not.toContain(chunks[0]);
    // The same probe does see the chunk where it is used.
    const list = await loadedBy(['list', 'users', '--count'], { IDCLI_ACCESS_TOKEN: 'x', IDCLI_BASE_URL: undefined });
    expect(list.files).toContain(chunks[0]);
    // Pages are remembered by their URLs; a digest, and with it node:crypto, is only for very long ones.
    expect(list.files).not.toContain('node:crypto');
  }, 60_000);
});

describeEachStore('idcli token with a cached token', (store) => {
  it('loads no Node module that only writes, refreshes or streams need', async () => {
    h = await harness({ store, recordItems: 0 });
    await storeLogin(h);
    const token = await loadedBy(['token']);
    expect(token.code).toBe(0);
    expect(token.files).toContain('node:fs'); // the probe sees builtins
    // node:fs/promises serves writes and deletes, node:crypto the refresh (PKCE) and chunked keychain records, the
    // HTTP modules requests, which a cached token makes none of. The keychain library is required like a chunk,
    // without node:module and the ES module loader it brings.
    const unneeded = ['node:fs/promises', 'node:crypto', 'node:http', 'node:https', 'node:module'];
    // The keychain's bus check speaks over node:net, which brings the streams; the file store needs neither.
    if (store === 'file') unneeded.push('node:net', 'node:stream');
    expect(token.files.filter((f) => unneeded.includes(f))).toEqual([]);
  }, 60_000);

  it('loads the entry and the chunks of its store, no other file of dist/', async () => {
    h = await harness({ store, recordItems: 0 });
    await storeLogin(h);
    const token = await loadedBy(['token']);
    expect(token.code).toBe(0);
    // Chunks are named after their first module, then a content hash: `record-DaP5Axol.cjs`. Every file Node
    // requires costs start-up time, so the code a cached token runs must not be scattered over shared chunks.
    const chunks = token.files
      .filter((f) => f.startsWith(`${DIST}/`))
      .map((f) => basename(f).replace(/-[\w-]{8}\.cjs$/, ''));
    expect(chunks).toContain('cli.cjs');
    const allowed = ['cli.cjs', `${store}-store`, 'record', ...(store === 'file' ? ['pid'] : [])];
    expect(chunks.filter((c) => !allowed.includes(c))).toEqual([]);
    // The etcd store and its client are their own chunk, which the same probe sees where that store is chosen.
    const etcdChunks = readdirSync(DIST).filter((f) => f.startsWith('etcd-'));
    expect(etcdChunks.length).toBeGreaterThan(0);
    expect(token.files.filter((f) => etcdChunks.includes(basename(f)))).toEqual([]);
  }, 60_000);
});

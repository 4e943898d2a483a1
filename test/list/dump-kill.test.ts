/**
 * `idcli list -o FILE` killed with SIGKILL at random moments, 20 times over one walk, each kill followed by a re-run
 * of the same command, until one completes: FILE's sha256 equals a clean run's. After every kill, the state claims
 * only bytes that are in FILE, and they are the clean run's bytes.
 *
 * Each page is served 30 ms late and a run lives up to half a second, so that a kill lands anywhere in the walk:
 * before the first page, in a page's write, between a page and the state's replacement (at most every
 * STATE_INTERVAL_MS), in the state's write. The kill moments come from a seeded generator; the seed
 * is in every assertion's message, to replay a failure.
 */
import type { ChildProcess } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../emulator/index.js';
import { generator } from '../emulator/records.js';
import { sha256 } from '../support/hash.js';
import { SCHEMES } from '../support/scheme.js';
import { eachTest, list, type ListEnv, plainItems } from './helpers.js';

let emu: Emulator;
let env: ListEnv & { cleanup: () => Promise<void> };

const KILLS = 20;
/** A kill lands this long at most after the run's first request, so each run writes a part of the walk only. */
const WINDOW_MS = 500;

/** A seeded generator of numbers in [0, 1), so a failing sequence of kill moments can be replayed. */
function random(seed: number): () => number {
  const next = generator(seed);
  return () => next() / 2 ** 32;
}

/** SIGKILL at a random moment within WINDOW_MS of the run's first request for `path`. */
function killAtRandom(path: string, next: () => number) {
  const delay = Math.floor(next() * WINDOW_MS);
  let child: ChildProcess | undefined;
  emu.onRequest((q) => {
    if (q.path !== path) return;
    emu.onRequest(undefined);
    setTimeout(() => child?.kill('SIGKILL'), delay);
  });
  return {
    onSpawn: (c: ChildProcess) => {
      child = c;
    },
  };
}

async function killedOverAndOver(path: string, pageSize: number, args: string[]): Promise<void> {
  args = ['--page-size', String(pageSize), ...args];
  const seed = Date.now() % 2 ** 31;
  const why = `seed ${seed}`;
  const next = random(seed);
  emu.inject({ path, times: Number.POSITIVE_INFINITY, fault: { kind: 'latency', ms: 30 } });

  const cleanFile = join(env.configDir, 'clean.ndjson');
  const clean = await list(env, [path, ...args, '-o', cleanFile]);
  expect(clean.code, clean.stderr).toBe(0);
  const cleanBytes = await readFile(cleanFile);

  const out = join(env.configDir, 'dump.ndjson');
  const state = `${out}.idcli-state`;
  let kills = 0;
  let progressed = 0;
  /** Runs whose state moved on by more than one page: replaced during the run, not only after its first page. */
  let replacedMidRun = 0;
  while (kills < KILLS) {
    const r = await list(env, [path, ...args, '-o', out], killAtRandom(path, next));
    // The collection is long enough for every kill to land before the walk completes.
    expect(r.signal, `${why}: run ${kills + 1} ended by itself (${r.code}): ${r.stderr}`).toBe('SIGKILL');
    kills++;
    const saved = await readFile(state, 'utf8').then(
      (t) => JSON.parse(t) as { bytes: number; items: number },
      () => undefined,
    );
    if (saved === undefined) continue; // killed before its first page was recorded
    if (saved.items > progressed + pageSize) replacedMidRun++;
    progressed = Math.max(progressed, saved.items);
    const file = await readFile(out);
    // The state never claims bytes that are not in FILE, and what it claims is the clean run's.
    expect(file.length, why).toBeGreaterThanOrEqual(saved.bytes);
    expect(file.subarray(0, saved.bytes).equals(cleanBytes.subarray(0, saved.bytes)), why).toBe(true);
  }
  // The kills were spread over the walk, not all before its first page, and some came after the state had been
  // replaced during the run.
  expect(progressed, why).toBeGreaterThan(0);
  expect(replacedMidRun, why).toBeGreaterThan(0);
  for (;;) {
    const r = await list(env, [path, ...args, '-o', out]);
    if (r.code === 0) break;
    expect.fail(`${why}: the re-run failed with ${r.code}: ${r.stderr}`);
  }
  const done = await readFile(out);
  expect(sha256(done), why).toBe(sha256(cleanBytes));
  expect((await stat(out)).mode & 0o777).toBe(0o600);
  const left = (await readdir(env.configDir)).filter((n) => n.startsWith('dump.ndjson.'));
  expect(left, why).toEqual([]);
}

describe.each(SCHEMES)('idcli list -o FILE killed with SIGKILL 20 times over one walk, over %s', (scheme) => {
  eachTest(
    [],
    (e, v) => {
      emu = e;
      env = v;
    },
    'minted',
    scheme,
  );

  it('an offset walk with pages in flight: the finished FILE is byte-identical to a clean run', async () => {
    emu.setCollection('/v1/items', { type: 'offset', items: plainItems(30_000) });
    await killedOverAndOver('/v1/items', 20, ['--concurrency', '4']);
  }, 240_000);

  it('a cursor walk: the finished FILE is byte-identical to a clean run', async () => {
    emu.setCollection('/v1/events', { type: 'cursor', items: plainItems(8_000, 'e') });
    await killedOverAndOver('/v1/events', 20, []);
  }, 240_000);
});

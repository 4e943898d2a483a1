/**
 * `idcli list -o FILE` killed with SIGKILL at random moments, 20 times over one walk, each kill followed by a re-run
 * of the same command, until one completes: FILE's sha256 equals the collection's NDJSON. After every kill, the state
 * claims only bytes that are in FILE, and they are the collection's first bytes.
 *
 * Each page of a killed run is served 15 ms late, and a run is killed a random moment after a random one of its first
 * page requests, so that a kill lands anywhere in the walk: before the first page, in a page's write, between a page
 * and the state's replacement (at most every STATE_INTERVAL_MS), in the state's write. The kill is counted in
 * requests, not in time from the run's start: on a slow machine a run then gets as far into the walk as on a fast
 * one, and lives longer, not shorter. The kill moments come from a seeded generator; the seed is in every
 * assertion's message, to replay a failure. The final re-run is not killed, so it walks at the emulator's own pace:
 * the latency would only make it slower.
 *
 * The walks are in files of their own (dump-kill-*.test.ts) so that the test forks run them side by side.
 */
import type { ChildProcess } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Emulator } from '../emulator/index.js';
import type { CollectionSpec } from '../emulator/types.js';
import { generator } from '../emulator/records.js';
import { sha256 } from './hash.js';
import type { Scheme } from './scheme.js';
import { eachTest, list, listCommand, type ListContext, ndjson } from './list.js';

/** The emulator and environment of the running test of a suite. */
export type KillSuite = ListContext;

/**
 * Registers, for every test of the calling suite over `scheme`, an emulator and environment, handed to
 * killedOverAndOver() through the returned value. Each suite has its own, so suites may run at the same time.
 */
export function killSuite(scheme: Scheme): KillSuite {
  return eachTest([], 'minted', scheme);
}

const KILLS = 20;
/** How late each page of a killed run is served: the time a run lives grows with the pages it asks for. */
const PAGE_LATENCY_MS = 15;
/**
 * A run is killed after one of its first ROUNDS × inFlight page requests: at least ROUNDS × PAGE_LATENCY_MS of
 * pages, so that about half the runs outlive STATE_INTERVAL_MS and replace the state during the run.
 */
const ROUNDS = 12;
/** The kill lands this long at most after its request: while the page is served, written, or the next one asked. */
const KILL_SPREAD_MS = 2 * PAGE_LATENCY_MS;

/**
 * The items a walk needs so that none of its KILLS runs can complete it: a run writes at most the pages it asked
 * for before its kill and the round served during KILL_SPREAD_MS, and resumes where the last one's state left it.
 * A longer collection would only lengthen the final, unkilled run.
 */
export function itemsForKills(pageSize: number, inFlight: number): number {
  return KILLS * (ROUNDS + 2) * inFlight * pageSize + pageSize;
}

/** A seeded generator of numbers in [0, 1), so a failing sequence of kill moments can be replayed. */
function random(seed: number): () => number {
  const next = generator(seed);
  return () => next() / 2 ** 32;
}

/** SIGKILL at a random moment within KILL_SPREAD_MS of a random one of the run's first page requests for `path`. */
function killAtRandom(emu: Emulator, path: string, inFlight: number, next: () => number) {
  let left = 1 + Math.floor(next() * ROUNDS * inFlight);
  const delay = Math.floor(next() * KILL_SPREAD_MS);
  let child: ChildProcess | undefined;
  emu.onRequest((q) => {
    if (q.path !== path || --left > 0) return;
    emu.onRequest(undefined);
    setTimeout(() => child?.kill('SIGKILL'), delay);
  });
  return {
    onSpawn: (c: ChildProcess) => {
      child = c;
    },
  };
}

/**
 * Serves `collection` at `path`, kills `idcli list PATH -o FILE` KILLS times over one walk, then resumes it. The runs
 * keep `inFlight` pages in flight (--concurrency).
 */
export async function killedOverAndOver(
  { emu, env }: KillSuite,
  path: string,
  collection: CollectionSpec,
  pageSize: number,
  inFlight: number,
): Promise<void> {
  emu.setCollection(path, collection);
  const args = ['--page-size', String(pageSize), ...(inFlight > 1 ? ['--concurrency', String(inFlight)] : [])];
  const seed = Date.now() % 2 ** 31;
  const why = `seed ${seed}`;
  const next = random(seed);

  // The items are compact JSON, so the collection's NDJSON is what a clean run writes (test/commands/list/dump.test.ts shows one).
  const cleanBytes = Buffer.from(ndjson(collection.items));
  emu.inject({ path, times: Number.POSITIVE_INFINITY, fault: { kind: 'latency', ms: PAGE_LATENCY_MS } });

  const out = join(env.configDir, 'dump.ndjson');
  const state = `${out}.idcli-state`;
  let kills = 0;
  let progressed = 0;
  /** Runs whose state moved on by more than one page: replaced during the run, not only after its first page. */
  let replacedMidRun = 0;
  while (kills < KILLS) {
    const r = await list(env, [path, ...args, '-o', out], killAtRandom(emu, path, inFlight, next));
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
    // The state never claims bytes that are not in FILE, and what it claims is the collection's.
    expect(file.length, why).toBeGreaterThanOrEqual(saved.bytes);
    expect(file.subarray(0, saved.bytes).equals(cleanBytes.subarray(0, saved.bytes)), why).toBe(true);
  }
  // The kills were spread over the walk, not all before its first page, and some came after the state had been
  // replaced during the run.
  expect(progressed, why).toBeGreaterThan(0);
  expect(replacedMidRun, why).toBeGreaterThan(0);
  emu.clearFaults();
  for (;;) {
    const r = await listCommand(env, [path, ...args, '-o', out]);
    if (r.code === 0) break;
    expect.fail(`${why}: the re-run failed with ${r.code}: ${r.stderr}`);
  }
  const done = await readFile(out);
  expect(sha256(done), why).toBe(sha256(cleanBytes));
  expect((await stat(out)).mode & 0o777).toBe(0o600);
  const left = (await readdir(env.configDir)).filter((n) => n.startsWith('dump.ndjson.'));
  expect(left, why).toEqual([]);
}

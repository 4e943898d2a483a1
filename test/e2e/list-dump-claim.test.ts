/**
 * Needs a process: runs started together on one FILE are processes, each claim named by its pid.
 * `idcli list -o FILE`'s one-writer claim (docs/cli.md, "One writer per FILE") against what a killed run or anyone
 * else left where the claim goes: of runs started together exactly one writes, the others refuse naming it (exit 2),
 * never exit 1; and a run is not stopped by what an older idcli left under the name of its own pid. Real processes
 * racing, through the built CLI; what a single run meets is tested in process (test/output/dump-claim.test.ts).
 */
import { type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { lstat, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { claimOf, completes as claimFreeRun, holder, plantClaimDir } from '../support/dump-claim.js';
import { eachDump, list, type ListRun, ndjson, plainItems, seq } from '../support/list.js';
import { deadPid } from '../support/store.js';
import { until } from '../support/until.js';

const ITEMS = plainItems(250);

const ctx = eachDump(ITEMS);

/**
 * Starts `n` runs on one FILE at once, each held at its first request, and ends them once every run has either
 * ended or reached the service: what each did, and how many reached the service (the writers).
 */
async function race(n: number, file: string): Promise<{ results: ListRun[]; writers: number }> {
  ctx.emu.inject({ path: '/v1/items', times: Number.POSITIVE_INFINITY, fault: { kind: 'latency', ms: 30_000 } });
  const before = ctx.emu.requests.length;
  const writers = () => ctx.emu.requests.slice(before).filter((q) => q.path === '/v1/items').length;
  const running: ChildProcess[] = [];
  let ended = 0;
  const runs = Array.from({ length: n }, () =>
    list(ctx.env, ['/v1/items', ...seq, '-o', file], { onSpawn: (c) => running.push(c) }).then((r) => {
      ended += 1;
      return r;
    }),
  );
  await until(() => (ended + writers() >= n ? true : undefined), 60_000, 'every run to end or reach the service');
  const seen = writers();
  for (const c of running) c.kill('SIGTERM');
  const results = await Promise.all(runs);
  ctx.emu.clearFaults();
  return { results, writers: seen };
}

/** Exactly one run wrote (and was stopped), every other one was exit 2 naming the run that holds FILE. */
function oneWriter({ results, writers }: { results: ListRun[]; writers: number }, file: string): void {
  const all = results.map((r) => `${r.code}: ${r.stderr}`).join('');
  expect(writers, all).toBe(1);
  expect(results.map((r) => r.code).sort(), all).toEqual([143, ...Array<number>(results.length - 1).fill(2)]);
  for (const r of results.filter((x) => x.code === 2))
    expect(r.stderr).toMatch(new RegExp(`^error: ${file} is being (written|claimed) by another idcli run`));
}

const completes = (file: string) => claimFreeRun(ctx.env, file, ITEMS);

describe('idcli list -o FILE: a claim no live run holds is taken over', () => {
  it("a temporary claim planted under the name of the next run's pid does not get in its way", async () => {
    const file = ctx.out;
    let planted = '';
    const r = await list(ctx.env, ['/v1/items', ...seq, '-o', file], {
      // Before the run's code starts: the name an earlier idcli would have used.
      onSpawn: (c) => {
        planted = `${claimOf(file)}.${c.pid}.tmp`;
        mkdirSync(planted);
      },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(ndjson(ITEMS));
    expect((await lstat(planted)).isDirectory()).toBe(true);
  });
});

describe('idcli list -o FILE: of runs started together on a stale claim, exactly one writes', () => {
  it("eight runs on a killed run's claim, with a stale reaper file beside it", async () => {
    const file = ctx.out;
    await plantClaimDir(file, 'tag', holder(await deadPid(), { start: 'gone' }));
    await writeFile(`${claimOf(file)}.reap`, '');
    oneWriter(await race(8, file), file);
    await completes(file);
  }, 120_000);

  it('eight runs on a garbage claim file', async () => {
    const file = ctx.out;
    await writeFile(claimOf(file), '\0\0garbage');
    oneWriter(await race(8, file), file);
    await completes(file);
  }, 120_000);

  it('any bytes in a claim: two runs at once take it over with one writer, or both refuse naming it', async () => {
    const file = ctx.out;
    const record = fc.oneof(
      fc.uint8Array({ maxLength: 64 }),
      fc
        .record({
          pid: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)),
          host: fc.oneof(fc.constant(hostname()), fc.string()),
          start: fc.option(fc.string(), { nil: undefined }),
        })
        .map((o) => new TextEncoder().encode(JSON.stringify(o))),
    );
    await fc.assert(
      fc.asyncProperty(record, fc.boolean(), async (bytes, asDir) => {
        await rm(claimOf(file), { recursive: true, force: true });
        await rm(file, { force: true });
        if (asDir) await plantClaimDir(file, 'tag', bytes);
        else await writeFile(claimOf(file), bytes);
        const raced = await race(2, file);
        const all = raced.results.map((r) => `${r.code}: ${r.stderr}`).join('');
        if (raced.writers === 0) {
          // A claim of a run on another host: both wait for it, naming it.
          for (const r of raced.results) {
            expect(r.code, all).toBe(2);
            expect(r.stderr, all).toContain(`remove ${claimOf(file)}`);
          }
        } else oneWriter(raced, file);
      }),
      { numRuns: 20 },
    );
  }, 300_000);
});

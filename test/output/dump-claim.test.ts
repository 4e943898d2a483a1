// A process for the races: runs started together on one FILE are processes, each claim named by its pid.
/**
 * `idcli list -o FILE`'s one-writer claim (docs/cli.md, "One writer per FILE") against what a killed run, an older
 * idcli or anyone else left where the claim goes: whatever it holds, a run takes it over or refuses naming it (exit
 * 2), never exit 1, and of runs started together exactly one writes. Real processes racing, through the built CLI;
 * a single run that only meets what was left runs in this process (runCommand).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { lstat, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../emulator/index.js';
import { until } from '../support/until.js';
import { eachTest, list, listCommand, type ListEnv, type ListRun, ndjson, plainItems } from '../support/list.js';

let emu: Emulator;
let env: ListEnv & { cleanup: () => Promise<void> };
const ITEMS = plainItems(250);
const seq = ['--concurrency', '1'];

eachTest(ITEMS, (e, v) => {
  emu = e;
  env = v;
});

const out = () => join(env.configDir, 'items.ndjson');
const claimOf = (file: string) => `${file}.idcli-run`;
const exists = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  );

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

/** A process of this machine that is not idcli, running until the test ends. */
function otherProcess(): number {
  const c = spawn('sleep', ['600'], { stdio: 'ignore' });
  children.push(c);
  if (c.pid === undefined) throw new Error('sleep did not start');
  return c.pid;
}

/** The pid of a process that has ended. */
async function deadPid(): Promise<number> {
  const c = spawn('true', [], { stdio: 'ignore' });
  await new Promise((resolve) => c.once('exit', resolve));
  if (c.pid === undefined) throw new Error('true did not start');
  return c.pid;
}

const holder = (pid: unknown, extra: Record<string, unknown> = {}) =>
  `${JSON.stringify({ pid, host: hostname(), nonce: 'n', ...extra })}\n`;

/** A claim as this idcli makes it: a directory holding one record. */
async function plantClaimDir(file: string, name: string, content: string | Uint8Array): Promise<void> {
  await mkdir(claimOf(file), { mode: 0o700 });
  await writeFile(join(claimOf(file), name), content, { mode: 0o600 });
}

/**
 * Starts `n` runs on one FILE at once, each held at its first request, and ends them once every run has either
 * ended or reached the service: what each did, and how many reached the service (the writers).
 */
async function race(n: number, file: string): Promise<{ results: ListRun[]; writers: number }> {
  emu.inject({ path: '/v1/items', times: Number.POSITIVE_INFINITY, fault: { kind: 'latency', ms: 30_000 } });
  const before = emu.requests.length;
  const writers = () => emu.requests.slice(before).filter((q) => q.path === '/v1/items').length;
  const running: ChildProcess[] = [];
  let ended = 0;
  const runs = Array.from({ length: n }, () =>
    list(env, ['/v1/items', ...seq, '-o', file], { onSpawn: (c) => running.push(c) }).then((r) => {
      ended += 1;
      return r;
    }),
  );
  await until(() => (ended + writers() >= n ? true : undefined), 60_000, 'every run to end or reach the service');
  const seen = writers();
  for (const c of running) c.kill('SIGTERM');
  const results = await Promise.all(runs);
  emu.clearFaults();
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

async function completes(file: string): Promise<void> {
  const r = await listCommand(env, ['/v1/items', ...seq, '-o', file]);
  expect(r.code, r.stderr).toBe(0);
  expect(await readFile(file, 'utf8')).toBe(ndjson(ITEMS));
  expect(await exists(claimOf(file))).toBe(false);
}

describe('idcli list -o FILE: a claim no live run holds is taken over', () => {
  it('a reaper file left beside a stale claim, empty, garbage, a directory or naming a live pid, does not block FILE', async () => {
    const file = out();
    const reaper = `${claimOf(file)}.reap`;
    const dead = await deadPid();
    const kinds: Array<[string, () => Promise<void>]> = [
      ['empty', () => writeFile(reaper, '')],
      ['garbage', () => writeFile(reaper, 'not a pid\n')],
      ['a directory', () => mkdir(reaper)],
      ['a live pid not of idcli', () => writeFile(reaper, `${otherProcess()}\n`)],
    ];
    for (const [what, plant] of kinds) {
      await plant();
      await writeFile(claimOf(file), holder(dead));
      const r = await listCommand(env, ['/v1/items', ...seq, '-o', file]);
      expect(r.code, `${what}: ${r.stderr}`).toBe(0);
      expect(await readFile(file, 'utf8')).toBe(ndjson(ITEMS));
      expect(await exists(claimOf(file))).toBe(false);
      await rm(reaper, { recursive: true });
    }
  });

  it('a live process that is not an idcli run is not taken for the holder, with or without a start time', async () => {
    const file = out();
    const pid = otherProcess();
    await writeFile(claimOf(file), holder(pid));
    await completes(file);
    await plantClaimDir(file, 'tag', holder(pid));
    await completes(file);
    await plantClaimDir(file, 'tag', holder(pid, { start: 'another boot/1' }));
    await completes(file);
  });

  it('a claim naming pid 0, -1, 1.5 or a pid too large is garbage, and taken over', async () => {
    const file = out();
    for (const pid of [0, -1, 1.5, 2 ** 53, '1']) {
      await writeFile(claimOf(file), holder(pid));
      await completes(file);
      await plantClaimDir(file, 'tag', holder(pid));
      await completes(file);
    }
  });

  it('a claim over 4 kB, as a file or as the record in a claim, is taken over, never exit 1', async () => {
    const file = out();
    const big = `${holder(process.pid).trimEnd()}${' '.repeat(5000)}\n`;
    await writeFile(claimOf(file), big);
    await completes(file);
    await plantClaimDir(file, 'tag', big);
    await completes(file);
  });

  it("a temporary claim planted under the name of the next run's pid does not get in its way", async () => {
    const file = out();
    let planted = '';
    const r = await list(env, ['/v1/items', ...seq, '-o', file], {
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

describe('idcli list -o FILE: what is not a claim of idcli is refused naming it', () => {
  it('several entries, or a record that is a link or a directory: exit 2 naming the claim, no request', async () => {
    const file = out();
    const claim = claimOf(file);
    const plants: Array<() => Promise<void>> = [
      async () => {
        await plantClaimDir(file, 'a', holder(1));
        await writeFile(join(claim, 'b'), holder(1));
      },
      async () => {
        await mkdir(join(claim, 'sub'), { recursive: true });
      },
    ];
    for (const plant of plants) {
      await plant();
      const r = await listCommand(env, ['/v1/items', ...seq, '-o', file]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`refusing to use ${claim}`);
      expect(r.stderr).toContain(`remove ${claim} (rm -r)`);
      expect(r.requests).toEqual([]);
      await rm(claim, { recursive: true });
    }
  });
});

describe('idcli list -o FILE: of runs started together on a stale claim, exactly one writes', () => {
  it("eight runs on a killed run's claim, with a stale reaper file beside it", async () => {
    const file = out();
    await plantClaimDir(file, 'tag', holder(await deadPid(), { start: 'gone' }));
    await writeFile(`${claimOf(file)}.reap`, '');
    oneWriter(await race(8, file), file);
    await completes(file);
  }, 120_000);

  it('eight runs on a garbage claim file', async () => {
    const file = out();
    await writeFile(claimOf(file), '\0\0garbage');
    oneWriter(await race(8, file), file);
    await completes(file);
  }, 120_000);

  it('any bytes in a claim: two runs at once take it over with one writer, or both refuse naming it', async () => {
    const file = out();
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

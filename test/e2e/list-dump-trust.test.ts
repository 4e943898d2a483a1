/**
 * Needs a process: a FIFO must not hang the run, -o /dev/stdout is the process's own stdout, one writer per FILE is
 * told by pid across runs killed and racing, and a relative FILE is the process's cwd, as another user.
 * `idcli list -o FILE` and what is not a file of the user's own (docs/cli.md, "Private files"), through the built
 * CLI against the emulator; the rest of these rules are tested in process (test/commands/list/dump-trust.test.ts).
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { chmod, mkdir, open, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { exists } from '../support/dump-claim.js';
import { cliEnv, eachDump, list, listCommand, ndjson, plainItems, signalAtThirdPage, seq } from '../support/list.js';

const run = promisify(execFile);
const ROOT_USER = process.getuid?.() === 0;
const NOBODY = 65534;

const ITEMS = plainItems(250);

const ctx = eachDump(ITEMS);

describe('idcli list -o FILE: links of the user, and what is not a regular file', () => {
  it('a FIFO with no reader: exit 2 before any request, at once', async () => {
    const fifo = join(ctx.env.configDir, 'fifo');
    await run('mkfifo', [fifo]);
    const r = await list(ctx.env, ['/v1/items', ...seq, '-o', fifo], { timeoutMs: 10_000 });
    expect(r.signal).toBeNull();
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`refusing to use ${fifo}: it is not a regular file`);
    expect(r.requests).toEqual([]);
  });

  it('a FIFO with a reader that never reads, and a link to it: exit 2 before any request', async () => {
    const fifo = join(ctx.env.configDir, 'fifo');
    await run('mkfifo', [fifo]);
    const reader = await open(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const link = join(ctx.env.configDir, 'to-fifo');
      await symlink(fifo, link);
      for (const file of [fifo, link]) {
        const r = await list(ctx.env, ['/v1/items', ...seq, '-o', file], { timeoutMs: 10_000 });
        expect(r.signal).toBeNull();
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain('it is not a regular file');
        expect(r.requests).toEqual([]);
      }
    } finally {
      await reader.close();
    }
  });

  it('-o /dev/stdout on a pipe is refused as not a regular file, and leaves nothing in /dev', async () => {
    const r = await list(ctx.env, ['/v1/items', ...seq, '-o', '/dev/stdout']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('it is not a regular file');
    expect(r.requests).toEqual([]);
    expect(await exists('/dev/stdout.idcli-state')).toBe(false);
  });

  it('-o /dev/stdout on a regular file writes that file, with its state beside it and none in /dev', async () => {
    const fh = await open(ctx.out, 'w');
    let r;
    try {
      r = await list(ctx.env, ['/v1/items', ...seq, '-o', '/dev/stdout'], { stdout: fh.fd });
    } finally {
      await fh.close();
    }
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS));
    expect(await exists('/dev/stdout.idcli-state')).toBe(false);
    expect(await exists('/dev/stdout.idcli-run')).toBe(false);
    expect(await exists(`${ctx.out}.idcli-state`)).toBe(false);
  });
});

describe('idcli list -o FILE has one writer', () => {
  it('a second run while the first writes is exit 2 at once naming its pid; the first then continues', async () => {
    ctx.emu.inject({ path: '/v1/items', nth: 3, fault: { kind: 'latency', ms: 20_000 } });
    let first: ChildProcess | undefined;
    let seen = 0;
    // The second run starts as the first one's third request arrives (held there); the first is stopped after.
    const second = new Promise<Awaited<ReturnType<typeof list>>>((resolve) => {
      ctx.emu.onRequest((q) => {
        if (q.path !== '/v1/items' || ++seen !== 3) return;
        ctx.emu.onRequest(undefined);
        void list(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]).then((r) => {
          first?.kill('SIGTERM');
          resolve(r);
        });
      });
    });
    const firstRun = list(ctx.env, ['/v1/items', ...seq, '-o', ctx.out], {
      onSpawn: (c) => {
        first = c;
      },
    });
    const r = await second;
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${ctx.out} is being written by another idcli run (pid ${first?.pid})`);
    expect(r.requests).toEqual([]);
    const f = await firstRun;
    expect(f.code, f.stderr).toBe(143);
    expect(await exists(`${ctx.out}.idcli-run`)).toBe(false);
    ctx.emu.clearFaults();
    const again = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
    expect(again.code, again.stderr).toBe(0);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS));
  }, 60_000);

  it('the claim of a run killed with SIGKILL is taken over, and the walk continues byte-identical', async () => {
    const first = await list(ctx.env, ['/v1/items', ...seq, '-o', ctx.out], signalAtThirdPage(ctx.emu, 'SIGKILL'));
    expect(first.signal).toBe('SIGKILL');
    expect(await exists(`${ctx.out}.idcli-run`)).toBe(true);
    ctx.emu.clearFaults();
    const again = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/resuming \S+ after [12]00 items/);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS));
    expect(await exists(`${ctx.out}.idcli-run`)).toBe(false);
  }, 60_000);

  it('three runs started at once on the claim of a killed run: one takes it over, the others are exit 2', async () => {
    const first = await list(ctx.env, ['/v1/items', ...seq, '-o', ctx.out], signalAtThirdPage(ctx.emu, 'SIGKILL'));
    expect(first.signal).toBe('SIGKILL');
    ctx.emu.clearFaults();
    // Whichever run wins holds its first request until the others have ended.
    ctx.emu.inject({ path: '/v1/items', times: Number.POSITIVE_INFINITY, fault: { kind: 'latency', ms: 20_000 } });
    const children: ChildProcess[] = [];
    let ended = 0;
    const runs = [0, 1, 2].map(() =>
      list(ctx.env, ['/v1/items', ...seq, '-o', ctx.out], { onSpawn: (c) => children.push(c) }).then((r) => {
        if (r.code === 2) ended += 1;
        if (ended === 2) for (const c of children) c.kill('SIGTERM');
        return r;
      }),
    );
    const results = await Promise.all(runs);
    const codes = results.map((r) => r.code).sort();
    expect(codes, results.map((r) => r.stderr).join('')).toEqual([143, 2, 2]);
    for (const r of results.filter((x) => x.code === 2))
      expect(r.stderr).toMatch(/is being (written|claimed) by another idcli run/);
    ctx.emu.clearFaults();
    const again = await listCommand(ctx.env, ['/v1/items', ...seq, '-o', ctx.out]);
    expect(again.code, again.stderr).toBe(0);
    expect(await readFile(ctx.out, 'utf8')).toBe(ndjson(ITEMS));
  }, 90_000);
});

describe('idcli list -o FILE: the state tells the truth', () => {
  it('a directory where the state cannot be made, named relatively: the fix names the directory', async () => {
    const sealed = join(ctx.env.configDir, 'sealed');
    await mkdir(sealed);
    await chmod(sealed, 0o555);
    // Root passes mode bits; nobody does not. The test's directory must let nobody in.
    await chmod(ctx.env.configDir, 0o755);
    const asOther = ROOT_USER ? { uid: NOBODY, gid: NOBODY } : {};
    const r = await runCli(['list', '/v1/items', ...seq, '-o', 'ro.ndjson'], {
      env: cliEnv(ctx.env, { IDCLI_CONFIG_DIR: join(sealed, 'config') }),
      cwd: sealed,
      ...asOther,
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toBe(
      `error: cannot create ro.ndjson: permission denied (EACCES); make ${sealed} writable for you (chmod u+rwx '${sealed}')\n`,
    );
  });
});

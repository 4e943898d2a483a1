// Needs a process: signals sent to a real process and the exit status 128 + n it ends with.
/**
 * SIGINT (Ctrl-C), SIGTERM (what CI runners send on cancel or time-out) and SIGHUP (a closed terminal) end `list`:
 * whole pages only on stdout, the resume hint on stderr, exit 128 + the signal's number.
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { closeSync, constants as fsConstants, openSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eachTest, list, ndjson, plainItems, resumeUrl, signalAtThirdPage } from '../support/list.js';

const ITEMS = plainItems(250);

const ctx = eachTest(ITEMS);

describe('idcli list stopped by a signal', () => {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    it(`${signal}: no partial line, the resume hint, exit ${code}`, async () => {
      const started = Date.now();
      const r = await list(ctx.env, ['/v1/items', '--concurrency', '1'], signalAtThirdPage(ctx.emu, signal));
      expect(r.signal).toBeNull();
      expect(r.code).toBe(code);
      expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 200)));
      expect(r.stderr).toMatch(/stopped after 200 items/);
      expect(resumeUrl(r.stderr)).toBe(`${ctx.emu.baseUrl}/v1/items?pageIndex=2&pageSize=100`);
      expect(Date.now() - started).toBeLessThan(15_000);
    }, 60_000);
  }

  it('a second signal leaves at once, even while something still hangs', async () => {
    const r = await list(ctx.env, ['/v1/items', '--concurrency', '1'], signalAtThirdPage(ctx.emu, 'SIGTERM', 2));
    // The second signal either finds idcli's handler (exit 143) or, when the first one has already let the run end,
    // lands while Node tears down and takes the default action (killed by SIGTERM). A shell shows 143 for both.
    expect(r.signal === null ? r.code : 128 + constants.signals[r.signal as NodeJS.Signals]).toBe(143);
    expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 200)));
  }, 60_000);
});

describe('idcli list stopped while its reader has stopped reading', () => {
  it('SIGTERM ends it though the pipe stays full, and the hint counts the whole lines the reader got', async () => {
    // Pages of about 42 kB into a pipe of 64 kB: the first page fits, the second only in part.
    const items = Array.from({ length: 1000 }, (_, i) => `{"id":${i},"pad":"${'p'.repeat(400)}"}`);
    ctx.emu.setCollection('/v1/big', { type: 'offset', items });
    const fifo = join(ctx.env.configDir, 'out.fifo');
    execFileSync('mkfifo', [fifo]);
    // The test holds the reading end and reads nothing until idcli has ended.
    const reader = openSync(fifo, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    const writer = openSync(fifo, fsConstants.O_WRONLY);
    let signalledAt = 0;
    try {
      const r = await list(ctx.env, ['/v1/big', '--concurrency', '1'], {
        stdout: writer,
        timeoutMs: 20_000,
        onSpawn: (child: ChildProcess) => {
          closeSync(writer);
          // The third page is asked for once the second is being written: into a pipe that is full by then.
          const timer = setInterval(() => {
            if (ctx.emu.requests.filter((q) => q.path === '/v1/big').length < 3) return;
            clearInterval(timer);
            signalledAt = Date.now();
            child.kill('SIGTERM');
          }, 10);
          child.on('exit', () => clearInterval(timer));
        },
      });
      const tookMs = Date.now() - signalledAt;
      expect(r.code, r.stderr).toBe(143);
      // Generous: the failure this catches is a run that waits for the reader without end, not a slow exit.
      expect(tookMs).toBeLessThan(15_000);
      const written = Number(/stopped after (\d+) items/.exec(r.stderr)?.[1]);
      // Part of the second page: the pipe took whole lines of it, no more.
      expect(written).toBeGreaterThan(100);
      expect(written).toBeLessThan(200);
      expect(readFileSync(reader, 'utf8')).toBe(ndjson(items.slice(0, written)));
      // The hint resumes from the page cut short, skipping the lines of it the reader has.
      const hint = /resume with: idcli list '([^']+)' \| tail -n \+(\d+)\n/.exec(r.stderr);
      expect(hint?.[1]).toBe(`${ctx.emu.baseUrl}/v1/big?pageIndex=1&pageSize=100`);
      expect(Number(hint?.[2])).toBe(written - 100 + 1);
      const rest = await list(ctx.env, [hint![1]!]);
      expect(rest.code).toBe(0);
      expect(
        rest.stdout
          .split('\n')
          .slice(written - 100)
          .join('\n'),
      ).toBe(ndjson(items.slice(written)));
    } finally {
      closeSync(reader);
    }
  }, 60_000);
});

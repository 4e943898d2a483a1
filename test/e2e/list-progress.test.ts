/**
 * Needs a process: the line is drawn on a real pseudo-terminal, sized and resized, that the built CLI writes to.
 * `list`'s live progress line through the BUILT CLI on a pseudo-terminal: it appears, moves, fits the width (also
 * after a resize), gives way to messages and is gone at the end; nothing of it reaches a pipe, CI or --quiet.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.js';
import { onTerminal } from '../support/pty.js';
import { frames, screen } from '../support/terminal.js';
import { cliEnv, eachEmulator, list, ndjson, plainItems } from '../support/list.js';

let out: string;

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('build the CLI first: npm run build');
});

const ctx = eachEmulator();
beforeEach(() => {
  out = join(ctx.env.configDir, 'out.ndjson');
});

/**
 * Ten pages of 100 items, each after the first one held back longer than the line's least interval between draws,
 * so that each page shows.
 */
function slowCollection(path: string, type: 'offset' | 'cursor', ms = 250): void {
  ctx.emu.setCollection(path, { type, items: plainItems(1000) });
  ctx.emu.inject({ path, nth: 2, times: 9, fault: { kind: 'latency', ms } });
}

const listCmd = (args: string) => `node "${BIN}" list ${args} --page-size 100 > "${out}"`;

/** The screen at the end: what stays in the terminal once the command has finished. */
const finalScreen = (raw: string) => screen(raw).filter((l) => l !== '');

describe('idcli list: the progress bar on a terminal', () => {
  it('shows a bar that moves, fits the width, and leaves only the summary', async () => {
    slowCollection('/v1/slow', 'offset');
    const r = await onTerminal(listCmd('/v1/slow'), { env: cliEnv(ctx.env), columns: 90 });
    expect(r.code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(ndjson(plainItems(1000)));

    const bars = frames(r.raw).filter((f) => f.startsWith('['));
    const percents = bars.map((f) => Number(/\] +(\d+)%/.exec(f)?.[1]));
    expect(new Set(percents).size).toBeGreaterThanOrEqual(3);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(bars.some((f) => /^\[█+░+\] +\d+% {2}[\d,]+\/1,000 items {2}[\d.]+k?\/s {2}ETA \d+s$/.test(f))).toBe(true);
    for (const f of frames(r.raw)) expect(f.length).toBeLessThan(90);
    // NO_COLOR (set by the test environment): not one colour code.
    expect(r.raw).not.toContain('\x1b[3');

    expect(finalScreen(r.raw)).toHaveLength(1);
    expect(finalScreen(r.raw)[0]).toMatch(/^1000 items in 10 pages \([\d.]+ s\)$/);
  }, 60_000);

  it('is fitted again when the terminal gets narrower', async () => {
    slowCollection('/v1/slow', 'offset', 300);
    // Narrowed once a wide bar has been drawn, with most of the walk still to come: the test sees the bar on the
    // terminal and tells the shell through a file.
    const drawn = join(ctx.env.configDir, 'wide-bar-drawn');
    const cmd = `${listCmd('/v1/slow')} & until [ -e "${drawn}" ]; do sleep 0.05; done; stty cols 40; wait $!`;
    const onOutput = (raw: string): void => {
      if (!existsSync(drawn) && frames(raw).some((f) => f.startsWith('[') && f.length >= 40)) writeFileSync(drawn, '');
    };
    const r = await onTerminal(cmd, { env: cliEnv(ctx.env), columns: 100, onOutput });
    expect(r.code).toBe(0);
    const all = frames(r.raw);
    const wide = all.findIndex((f) => f.length >= 40);
    const narrow = all.findLastIndex((f) => f.length >= 40);
    expect(wide).toBeGreaterThanOrEqual(0);
    // After the resize every frame fits the 40 columns, and there are some.
    const after = all.slice(narrow + 1);
    expect(after.length).toBeGreaterThanOrEqual(2);
    for (const f of after) expect(f.length).toBeLessThan(40);
    expect(after.some((f) => f.startsWith('['))).toBe(true);
    expect(finalScreen(r.raw)).toEqual([expect.stringMatching(/^1000 items in 10 pages/)]);
  }, 60_000);

  it('without totalItems shows count, pages, rate and elapsed time, and gives way to a retry notice', async () => {
    // Queued first, so it takes the fourth request before the latency fault does.
    ctx.emu.inject({ path: '/v1/cursor', nth: 4, fault: { kind: 'status', status: 503, retryAfter: '2' } });
    slowCollection('/v1/cursor', 'cursor');
    const r = await onTerminal(listCmd('/v1/cursor'), { env: cliEnv(ctx.env), columns: 100 });
    expect(r.code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(ndjson(plainItems(1000)));
    const counts = frames(r.raw).filter((f) => /^[\d,]+ items {2}\d+ pages? {2}/.test(f));
    expect(counts.length).toBeGreaterThanOrEqual(3);
    expect(counts.some((f) => /^\d+ items {2}\d+ pages {2}[\d.]+k?\/s {2}\d+s elapsed$/.test(f))).toBe(true);
    expect(r.raw).not.toContain('█');
    // The notice sits on a row of its own, and the line came back under it while waiting.
    expect(finalScreen(r.raw)).toEqual([
      'HTTP 503; retrying in 2 s (retry 1 of 5)',
      expect.stringMatching(/^1000 items in 10 pages/),
    ]);
    const notice = r.raw.indexOf('retrying in 2 s');
    expect(frames(r.raw.slice(notice)).some((f) => /items {2}\d+ pages/.test(f))).toBe(true);
  }, 60_000);

  it('counts --limit as the whole', async () => {
    slowCollection('/v1/slow', 'offset');
    const r = await onTerminal(listCmd('/v1/slow --limit 400'), { env: cliEnv(ctx.env), columns: 100 });
    expect(r.code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(ndjson(plainItems(400)));
    // Whichever pages a loaded machine draws, each bar counts out of the 400 asked for, its percentage to match.
    const counts = frames(r.raw)
      .map((f) => /\] +(\d+)% {2}([\d,]+)\/400 items/.exec(f))
      .filter((m) => m !== null)
      .map((m) => ({ percent: Number(m[1]), items: Number(m[2]!.replace(/,/g, '')) }));
    expect(counts.length).toBeGreaterThanOrEqual(1);
    for (const c of counts) expect(c.percent).toBe(Math.floor((c.items / 400) * 100));
    expect(frames(r.raw).some((f) => /\/1,000 items/.test(f))).toBe(false);
    expect(finalScreen(r.raw)).toEqual([expect.stringMatching(/^400 items in 4 pages/)]);
  }, 60_000);

  it('colours the bar unless NO_COLOR is set', async () => {
    slowCollection('/v1/slow', 'offset', 150);
    const r = await onTerminal(listCmd('/v1/slow'), { env: cliEnv(ctx.env, { NO_COLOR: undefined }), columns: 100 });
    expect(r.code).toBe(0);
    expect(r.raw).toMatch(/\[\x1b\[32m█+\x1b\[39m\x1b\[2m░+\x1b\[22m\]/);
  }, 60_000);
});

describe('idcli list: no progress line where nobody watches it', () => {
  it('nothing with CI set or --quiet on a terminal, and nothing on a pipe', async () => {
    slowCollection('/v1/slow', 'offset', 150);
    const ci = await onTerminal(listCmd('/v1/slow'), { env: cliEnv(ctx.env, { CI: 'true' }) });
    expect(ci.code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(ndjson(plainItems(1000)));
    // The summary only, written once as a plain line.
    expect(ci.raw).toMatch(/^1000 items in 10 pages \([\d.]+ s\)\r\n$/);

    slowCollection('/v1/slow', 'offset', 150);
    const quiet = await onTerminal(listCmd('/v1/slow --quiet'), { env: cliEnv(ctx.env) });
    expect(quiet.code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(ndjson(plainItems(1000)));
    expect(quiet.raw).toBe('');

    slowCollection('/v1/slow', 'offset', 150);
    const piped = await list(ctx.env, ['/v1/slow', '--page-size', '100']);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toBe(ndjson(plainItems(1000)));
    expect(piped.stderr).toBe('');
  }, 60_000);
});

/**
 * Compressed transfer, run in this process against the emulator: what idcli asks for, byte-exact output under each
 * coding, and the ways a coding can go wrong (unasked, a corrupt stream; a bomb in test/e2e/list-compression.test.ts).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { generateRecords } from '../../emulator/index.js';
import { runCommand } from '../../support/run-command.js';
import { cliEnv, eachTest, listCommand } from '../../support/list.js';

const PAGE = 50;
/** Realistic records (uuids, names, timestamps, hashes), so the codings compress as they would real data. */
const RECORDS = generateRecords(400);
const NDJSON = RECORDS.map((i) => `${i}\n`).join('');
const ctx = eachTest([]);
beforeEach(() => {
  ctx.emu.setCollection('/v1/records', { type: 'offset', items: [...RECORDS] });
  ctx.emu.setCollection('/v1/events', { type: 'cursor', items: [...RECORDS] });
});

/** The requests the emulator saw for `path`, with the coding each was answered in. */
function seen(path: string): { acceptEncoding: string | undefined }[] {
  return ctx.emu.requests
    .filter((r) => r.path === path)
    .map((r) => ({ acceptEncoding: r.headers['accept-encoding'] as string | undefined }));
}

/** Every page of /v1/records (and /v1/events, its cursor twin) sent in `coding` whatever was asked. */
function serveIn(coding: string): void {
  for (const path of ['/v1/records', '/v1/events'])
    ctx.emu.inject({ path, nth: 1, times: Number.POSITIVE_INFINITY, fault: { kind: 'encoding', coding } });
}

describe('idcli list: compressed transfer', () => {
  it('asks for gzip and br, and IDCLI_HTTP_COMPRESSION=0 for identity only', async () => {
    expect((await listCommand(ctx.env, ['/v1/records', '--limit', '1'])).code).toBe(0);
    expect(seen('/v1/records')[0]!.acceptEncoding).toMatch(/^(zstd, )?gzip, br$/);
    expect(
      (await listCommand(ctx.env, ['/v1/records', '--limit', '1'], { extraEnv: { IDCLI_HTTP_COMPRESSION: '0' } })).code,
    ).toBe(0);
    expect(seen('/v1/records')[1]!.acceptEncoding).toBe('identity');
  }, 60_000);

  it('gzip and br give byte for byte the output of identity: offset in parallel and one by one, cursor', async () => {
    /** The three walks, each checked to have come in `coding` (as --verbose traces every page). */
    const runs = async (coding: string, extraEnv: Record<string, string> = {}): Promise<Buffer[]> => {
      const out: Buffer[] = [];
      for (const args of [
        ['/v1/records', '--page-size', String(PAGE)],
        ['/v1/records', '--page-size', String(PAGE), '--concurrency', '1'],
        ['/v1/events', '--page-size', String(PAGE)],
      ]) {
        const r = await listCommand(ctx.env, [...args, '--verbose'], { extraEnv });
        expect(r.code, r.stderr).toBe(0);
        const traced = r.stderr.split('\n').filter((l) => / -> 200 /.test(l));
        expect(traced).toHaveLength(RECORDS.length / PAGE);
        for (const line of traced)
          expect(line).toMatch(coding === 'identity' ? / bytes\)$/ : new RegExp(`, ${coding}\\)$`));
        out.push(r.stdoutBytes);
      }
      return out;
    };
    const identity = await runs('identity', { IDCLI_HTTP_COMPRESSION: '0' });
    expect(identity[0]!.toString()).toBe(NDJSON);
    // br is what the emulator picks for "gzip, br"; gzip is forced by a fault that encodes whatever was asked.
    const br = await runs('br');
    serveIn('gzip');
    const gzip = await runs('gzip');
    for (const out of [...br, ...gzip]) expect(out.equals(identity[0]!)).toBe(true);
  }, 120_000);

  it.each(['x-snappy', 'gzip, x-snappy'])(
    'a coding that was not asked for (%s): exit 5 naming it, the page not asked again',
    async (coding) => {
      ctx.emu.inject({ path: '/v1/records', nth: 1, fault: { kind: 'encoding', coding } });
      const r = await listCommand(ctx.env, ['/v1/records']);
      expect(r.code).toBe(5);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/content coding 'x-snappy', which idcli did not ask for/);
      expect(r.requests).toHaveLength(1);
    },
    60_000,
  );

  it('gzip when identity was asked for is not asked for either: exit 5, with no hint to set what is set', async () => {
    ctx.emu.inject({ path: '/v1/records', nth: 1, fault: { kind: 'encoding', coding: 'gzip' } });
    const r = await listCommand(ctx.env, ['/v1/records'], { extraEnv: { IDCLI_HTTP_COMPRESSION: '0' } });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/content coding 'gzip', which idcli did not ask for \(Accept-Encoding: identity\)/);
    expect(r.stderr).toMatch(/; report it to the service\n/);
    expect(r.stderr).not.toContain('IDCLI_HTTP_COMPRESSION');
    // With compression on, the same refusal offers the setting.
    ctx.emu.inject({ path: '/v1/records', nth: 1, fault: { kind: 'encoding', coding: 'x-snappy' } });
    const on = await listCommand(ctx.env, ['/v1/records']);
    expect(on.code).toBe(5);
    expect(on.stderr).toContain('IDCLI_HTTP_COMPRESSION=0 asks for uncompressed bodies');
  }, 60_000);

  it('stacked codings that were all asked for (gzip, gzip; gzip, br) are decoded, byte for byte', async () => {
    const identity = await listCommand(ctx.env, ['/v1/records', '--page-size', String(PAGE), '--concurrency', '1'], {
      extraEnv: { IDCLI_HTTP_COMPRESSION: '0' },
    });
    expect(identity.stdout).toBe(NDJSON);
    for (const coding of ['gzip, gzip', 'gzip,br']) {
      ctx.emu.clearFaults();
      serveIn(coding);
      const r = await listCommand(ctx.env, ['/v1/records', '--page-size', String(PAGE), '--verbose']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(NDJSON);
      const traced = r.stderr.split('\n').filter((l) => / -> 200 /.test(l));
      expect(traced).toHaveLength(RECORDS.length / PAGE);
      for (const line of traced) expect(line).toContain(`, ${coding})`);
    }
  }, 60_000);

  it('a corrupt gzip page is retried like a cut connection, and written only when whole', async () => {
    ctx.emu.inject({ path: '/v1/records', nth: 2, fault: { kind: 'corrupt-gzip' } });
    const r = await listCommand(ctx.env, [
      '/v1/records',
      '--page-size',
      String(PAGE),
      '--concurrency',
      '1',
      '--verbose',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(NDJSON);
    expect(r.stderr).toMatch(/retrying GET .* \(the response body could not be decoded/);
    expect(seen('/v1/records')).toHaveLength(RECORDS.length / PAGE + 1);
  }, 60_000);
});

describe('idcli api: compressed transfer', () => {
  it('prints the decoded body byte for byte, and -i the headers as received', async () => {
    const record = RECORDS.slice(0, 40).join(',\n');
    ctx.emu.setResource('/v1/doc', `[${record}]\n`);
    const api = (args: string[], extraEnv: Record<string, string> = {}) =>
      runCommand(['api', ...args], { env: cliEnv(ctx.env, extraEnv) });
    const identity = await api(['/v1/doc'], { IDCLI_HTTP_COMPRESSION: '0' });
    expect(identity.stdout).toBe(`[${record}]\n`);
    const br = await api(['-i', '/v1/doc']);
    expect(br.stdout).toMatch(/\r\ncontent-encoding: br\r\n/i);
    expect(br.stdout.split('\r\n\r\n').slice(1).join('\r\n\r\n')).toBe(identity.stdout);
    ctx.emu.inject({ path: '/v1/doc', nth: 1, fault: { kind: 'encoding', coding: 'gzip' } });
    const gzip = await api(['-i', '/v1/doc']);
    expect(gzip.stdout).toMatch(/\r\ncontent-encoding: gzip\r\n/i);
    expect(gzip.stdout.split('\r\n\r\n').slice(1).join('\r\n\r\n')).toBe(identity.stdout);
  }, 60_000);
});

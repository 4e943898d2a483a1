import { describe, expect, it } from 'vitest';
import { awkward, eachEmulator, listCommand, ndjson, plainItems } from '../../support/list.js';

const ctx = eachEmulator();

describe('idcli list: lossless NDJSON', () => {
  it('dumps an offset collection with awkward items and pretty-printed pages byte for byte', async () => {
    const { raw, expected } = awkward(57);
    ctx.emu.setCollection('/v1/awkward', { type: 'offset', items: raw, pretty: true });
    const r = await listCommand(ctx.env, ['/v1/awkward', '--page-size', '10']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(expected));
    expect(r.requests).toHaveLength(6);
  }, 60_000);

  it('dumps a cursor collection byte for byte', async () => {
    const { raw, expected } = awkward(41);
    ctx.emu.setCollection('/v1/stream', { type: 'cursor', items: raw });
    const r = await listCommand(ctx.env, ['/v1/stream', '--page-size', '7']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(expected));
    expect(r.requests).toHaveLength(6);
    expect(r.requests.slice(1).every((u) => u.includes('cursor='))).toBe(true);
  }, 60_000);

  it('follows relative and plain-string links', async () => {
    const items = plainItems(23);
    ctx.emu.setCollection('/v1/rel', { type: 'cursor', items, linkStyle: 'relative', pretty: true });
    ctx.emu.setCollection('/v1/str', { type: 'offset', items, linkStyle: 'string' });
    const rel = await listCommand(ctx.env, ['/v1/rel', '--page-size', '5']);
    const str = await listCommand(ctx.env, [`${ctx.emu.baseUrl}/v1/str?pageSize=5`]);
    expect(rel.code).toBe(0);
    expect(rel.stdout).toBe(ndjson(items));
    expect(str.code).toBe(0);
    expect(str.stdout).toBe(ndjson(items));
  }, 60_000);

  it('prints nothing for an empty collection and exits 0', async () => {
    ctx.emu.setCollection('/v1/none', { type: 'offset', items: [] });
    ctx.emu.setCollection('/v1/nothing', { type: 'cursor', items: [] });
    for (const path of ['/v1/none', '/v1/nothing']) {
      const r = await listCommand(ctx.env, [path]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('');
      expect(r.requests).toHaveLength(1);
    }
  }, 60_000);

  it('applies --page-size and --page-index to the first request only', async () => {
    const items = plainItems(30);
    ctx.emu.setCollection('/v1/p', { type: 'offset', items });
    const r = await listCommand(ctx.env, ['/v1/p?q=a%20b', '--page-size', '4', '--page-index', '5']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ndjson(items.slice(20)));
    expect(r.requests[0]).toBe('/v1/p?q=a%20b&pageSize=4&pageIndex=5');
  }, 60_000);
});

describe('idcli list: options', () => {
  it('--count asks with pageSize=0 and prints totalItems', async () => {
    const r = await listCommand(ctx.env, ['/v1/users', '--count']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('250\n');
    expect(r.requests).toEqual(['/v1/users?pageSize=0']);
    ctx.emu.setCollection('/v1/counted', { type: 'cursor', items: plainItems(9), totalKnown: true });
    expect((await listCommand(ctx.env, ['/v1/counted', '--count'])).stdout).toBe('9\n');
  }, 60_000);

  it('--count on a collection without totalItems exits 5', async () => {
    const r = await listCommand(ctx.env, ['/v1/events', '--count']);
    expect(r.code).toBe(5);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/totalItems/);
  }, 60_000);

  it('--limit stops after that many items without fetching further pages', async () => {
    const users = await listCommand(ctx.env, ['/v1/users']);
    const all = users.stdout.split('\n').slice(0, -1);
    expect(all).toHaveLength(250);

    const r150 = await listCommand(ctx.env, ['/v1/users', '--limit', '150']);
    expect(r150.code).toBe(0);
    expect(r150.stdout).toBe(ndjson(all.slice(0, 150)));
    expect(r150.requests).toHaveLength(2);

    const r100 = await listCommand(ctx.env, ['/v1/users', '--limit', '100']);
    expect(r100.stdout).toBe(ndjson(all.slice(0, 100)));
    expect(r100.requests).toHaveLength(1);

    const cursor = await listCommand(ctx.env, ['/v1/events', '--limit', '3']);
    expect(cursor.stdout.split('\n')).toHaveLength(4);
    expect(cursor.requests).toHaveLength(1);

    const par = await listCommand(ctx.env, ['/v1/users', '--limit', '201', '--concurrency', '4']);
    expect(par.stdout).toBe(ndjson(all.slice(0, 201)));
    expect(par.requests).toHaveLength(3);
  }, 60_000);

  it('--concurrency 4 writes exactly what a sequential walk writes, fetching by pageIndex', async () => {
    const { raw, expected } = awkward(1037);
    ctx.emu.setCollection('/v1/many', { type: 'offset', items: raw, pretty: true });
    const seq = await listCommand(ctx.env, ['/v1/many', '--page-size', '50']);
    const par = await listCommand(ctx.env, ['/v1/many', '--page-size', '50', '--concurrency', '4']);
    expect(seq.code).toBe(0);
    expect(par.code).toBe(0);
    expect(seq.stdout).toBe(ndjson(expected));
    expect(par.stdoutBytes.equals(seq.stdoutBytes)).toBe(true);
    expect(par.requests).toHaveLength(21);
    expect(new Set(par.requests).size).toBe(21);
    expect(par.requests).toContain('/v1/many?pageSize=50&pageIndex=20');
  }, 60_000);

  it('--concurrency 64, the most allowed, runs with nothing on stderr (no listener warning)', async () => {
    const { raw, expected } = awkward(1037);
    ctx.emu.setCollection('/v1/many', { type: 'offset', items: raw });
    const r = await listCommand(ctx.env, ['/v1/many', '--page-size', '10', '--concurrency', '64']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(ndjson(expected));
  }, 60_000);

  it('a long walk through recycled page buffers (about 8 MB) stays byte-exact', async () => {
    // Pretty-printed pages of varying sizes reuse the same few body buffers, sequentially and with --concurrency.
    const { raw, expected } = awkward(6000);
    const padded = raw.map((r, i) => r.replace('{', `{"pad":"${'x'.repeat(900)}${i}",`));
    const want = expected.map((e, i) => e.replace('{', `{"pad":"${'x'.repeat(900)}${i}",`));
    ctx.emu.setCollection('/v1/big', { type: 'offset', items: padded, pretty: true });
    for (const extra of [[], ['--concurrency', '4']]) {
      const r = await listCommand(ctx.env, ['/v1/big', '--page-size', '500', ...extra]);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe(ndjson(want));
    }
  }, 60_000);

  it('--concurrency on a cursor collection falls back to following links', async () => {
    const r = await listCommand(ctx.env, ['/v1/events', '--concurrency', '4']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toHaveLength(231);
    expect(r.stderr).toMatch(/--concurrency ignored: the collection is cursor-based/);
  }, 60_000);

  it('refuses a full URL of another origin before any request (exit 2)', async () => {
    const r = await listCommand(ctx.env, ['http://127.0.0.1:9/v1/users']);
    expect(r.code).toBe(2);
    expect(r.requests).toHaveLength(0);
  }, 60_000);

  it('an empty target: list says what it needs, before any request (exit 2)', async () => {
    const r = await listCommand(ctx.env, ['  ']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('list needs a collection path or URL, e.g. idcli list /v1/users');
    expect(r.requests).toHaveLength(0);
  }, 60_000);
});

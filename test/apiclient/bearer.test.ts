import { describe, expect, it } from 'vitest';
import type { TokenSource } from '../../src/deps.js';
import { createBearer } from '../../src/apiclient/bearer.js';

/** A token source that counts calls; tokens are t1, t2, ... in order of refresh. */
function source() {
  const calls = { get: 0, refresh: 0, minTtl: [] as (number | undefined)[] };
  let n = 1;
  const s: TokenSource = {
    async get(minTtl) {
      calls.get++;
      calls.minTtl.push(minTtl);
      return `t${n}`;
    },
    async refresh(rejected) {
      calls.refresh++;
      await new Promise((r) => setTimeout(r, 10));
      if (rejected === `t${n}`) n++;
      return `t${n}`;
    },
  };
  return { s, calls };
}

describe('createBearer', () => {
  it('asks the source again only after the recheck interval, always with a 60 s margin', async () => {
    const { s, calls } = source();
    let now = 0;
    const b = createBearer(s, () => now, 30_000);
    expect(await b.token()).toBe('t1');
    now = 29_999;
    await b.token();
    expect(calls.get).toBe(1);
    now = 30_000;
    await b.token();
    expect(calls.get).toBe(2);
    expect(calls.minTtl).toEqual([60, 60]);
  });

  it('shares one refresh among concurrent 401s for the same token', async () => {
    const { s, calls } = source();
    const b = createBearer(s, () => 0);
    await b.token();
    const got = await Promise.all([b.rejected('t1'), b.rejected('t1'), b.rejected('t1')]);
    expect(got).toEqual(['t2', 't2', 't2']);
    expect(calls.refresh).toBe(1);
    expect(await b.token()).toBe('t2');
    // A late 401 for the old token does not refresh again.
    expect(await b.rejected('t1')).toBe('t2');
    expect(calls.refresh).toBe(1);
  });

  it('offers the settled token synchronously, never a stale or rejected one', async () => {
    const { s } = source();
    let now = 0;
    const b = createBearer(s, () => now, 30_000);
    expect(b.ready()).toBeUndefined();
    const pending = b.token();
    expect(b.ready()).toBeUndefined();
    expect(await pending).toBe('t1');
    expect(b.ready()).toBe('t1');
    // Due for a recheck: the source must be asked again, so nothing is offered synchronously.
    now = 30_000;
    expect(b.ready()).toBeUndefined();
    expect(await b.token()).toBe('t1');
    expect(b.ready()).toBe('t1');
    // A 401: the rejected token is withdrawn at once, and its replacement offered once it arrives.
    const refreshed = b.rejected('t1');
    expect(b.ready()).toBeUndefined();
    expect(await refreshed).toBe('t2');
    expect(b.ready()).toBe('t2');
  });
});

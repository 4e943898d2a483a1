import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { bearer, rawGet, type RawResponse } from './helpers.js';
import { type Emulator, type EmulatorOptions, startEmulator } from './index.js';
import { LINK_BURST } from './link.js';
import { VirtualClock } from './virtual-clock.js';

/** A page of about 475 KB of realistic records. */
const PAGE = '/v1/records?pageSize=1000';

describe('the emulator on a link', { timeout: 60_000 }, () => {
  let emu: Emulator | undefined;
  /** The link's clock: what a transfer waited is read from it, the same however busy the machine is. */
  let clock: VirtualClock;
  afterEach(async () => {
    expect(emu?.errors ?? []).toEqual([]);
    await emu?.close();
    emu = undefined;
  });

  async function start(opts: EmulatorOptions): Promise<{ emu: Emulator; auth: Record<string, string> }> {
    clock = new VirtualClock();
    emu = await startEmulator({ ...opts, clock });
    return { emu, auth: bearer(emu.mintTokens().access_token) };
  }

  /** The response and the time the link made it take, on the link's clock. */
  async function timed(fetchIt: () => Promise<RawResponse>): Promise<{ res: RawResponse; ms: number }> {
    const started = clock.now();
    const res = await fetchIt();
    return { res, ms: clock.now() - started };
  }

  /** Milliseconds that `bytes` need at `mbps`, less what the bucket's burst lets through at once. */
  const floorMs = (bytes: number, mbps: number) => (bytes - LINK_BURST) / (mbps * 125);

  it('a transfer of N bytes at B Mbit/s takes at least N/B', async () => {
    const { emu, auth } = await start({ link: { bandwidthMbps: 8 } });
    const before = emu.wireBytes();
    const { res, ms } = await timed(() => rawGet(`${emu.baseUrl}${PAGE}`, auth));
    expect(res.status).toBe(200);
    expect(res.body.length).toBeGreaterThan(400_000);
    const wire = emu.wireBytes() - before;
    expect(wire).toBeGreaterThan(res.body.length);
    expect(wire).toBeLessThan(res.body.length + 1024);
    expect(floorMs(wire, 8)).toBeGreaterThan(400);
    expect(ms).toBeGreaterThanOrEqual(floorMs(wire, 8));
  });

  it('connections share one byte budget: two transfers at once take twice as long as one', async () => {
    const { emu, auth } = await start({ link: { bandwidthMbps: 16 } });
    const before = emu.wireBytes();
    const { res, ms } = await timed(async () => {
      const both = await Promise.all([rawGet(`${emu.baseUrl}${PAGE}`, auth), rawGet(`${emu.baseUrl}${PAGE}`, auth)]);
      return both[0];
    });
    expect(res.status).toBe(200);
    const wire = emu.wireBytes() - before;
    expect(wire).toBeGreaterThan(2 * res.body.length);
    expect(floorMs(wire, 16)).toBeGreaterThan(400);
    expect(ms).toBeGreaterThanOrEqual(floorMs(wire, 16));
  });

  it('shaping counts the bytes on the wire: a gzip transfer pays for its compressed size only', async () => {
    const { emu, auth } = await start({ link: { bandwidthMbps: 2 } });
    const before = emu.wireBytes();
    const chargedBefore = emu.linkBytes();
    const { res, ms } = await timed(() => rawGet(`${emu.baseUrl}${PAGE}`, { ...auth, 'accept-encoding': 'gzip' }));
    expect(res.headers['content-encoding']).toBe('gzip');
    const wire = emu.wireBytes() - before;
    expect(wire).toBeLessThan(res.body.length + 1024);
    const decoded = gunzipSync(res.body).length;
    expect(ms).toBeGreaterThanOrEqual(floorMs(wire, 2));
    // The budget was charged the bytes on the wire, a fraction of the decoded ones.
    expect(decoded).toBeGreaterThan(3 * wire);
    expect(emu.linkBytes() - chargedBefore).toBe(wire);
  });

  it('the latency is paid before each response, on every endpoint', async () => {
    const latencyMs = 150;
    const { emu, auth } = await start({ link: { latencyMs } });
    for (const path of ['/v1/records?pageSize=5', '/oauth/token', '/nowhere']) {
      const { res, ms } = await timed(() => rawGet(`${emu.baseUrl}${path}`, auth));
      expect(res.status).toBeGreaterThanOrEqual(200);
      expect(ms).toBeGreaterThanOrEqual(latencyMs);
    }
    const { ms } = await timed(async () => {
      let last: RawResponse | undefined;
      for (let i = 0; i < 3; i++) last = await rawGet(`${emu.baseUrl}/v1/records?pageSize=5`, auth);
      return last as RawResponse;
    });
    expect(ms).toBeGreaterThanOrEqual(3 * latencyMs);
  });

  it('latency and bandwidth add up', async () => {
    const { emu, auth } = await start({ link: { bandwidthMbps: 16, latencyMs: 200 } });
    const before = emu.wireBytes();
    const { ms } = await timed(() => rawGet(`${emu.baseUrl}${PAGE}`, auth));
    const wire = emu.wireBytes() - before;
    expect(ms).toBeGreaterThanOrEqual(200 + floorMs(wire, 16));
  });

  it('counts wire bytes without a link too', async () => {
    const { emu, auth } = await start({});
    const before = emu.wireBytes();
    const res = await rawGet(`${emu.baseUrl}${PAGE}`, { ...auth, 'accept-encoding': 'br' });
    const wire = emu.wireBytes() - before;
    expect(res.headers['content-encoding']).toBe('br');
    expect(wire).toBeGreaterThan(res.body.length);
    expect(wire).toBeLessThan(res.body.length + 1024);
  });

  it('refuses a link that is not one', async () => {
    await expect(startEmulator({ link: { bandwidthMbps: 0 } })).rejects.toThrow(/bandwidth/);
    await expect(startEmulator({ link: { bandwidthMbps: Number.NaN } })).rejects.toThrow(/bandwidth/);
    await expect(startEmulator({ link: { latencyMs: -1 } })).rejects.toThrow(/latency/);
  });
});

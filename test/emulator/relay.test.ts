// The round-trip link (relay.ts) over real sockets: a new connection pays a round trip for the TCP handshake and one
// for the request, a kept connection only the request's, bytes arrive intact and in order, and connections count.
import { Agent, get } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from './index.js';
import { VirtualClock } from './virtual-clock.js';

const RTT = 150;

let emu: Emulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

/** The time on `clock` from the request to the response's last byte, and its body. */
function timedGet(url: string, agent: Agent, clock: { now(): number }): Promise<{ ms: number; body: string }> {
  const started = clock.now();
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ ms: clock.now() - started, body }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

describe('a link that charges every round trip', () => {
  it('a new connection pays the TCP handshake and the request, a kept one the request only', async () => {
    const clock = new VirtualClock();
    emu = await startEmulator({ link: { latencyMs: RTT, roundTrip: true }, clock });
    const direct = await startEmulator();
    try {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const url = `${emu.baseUrl}/v1/events`;
      const first = await timedGet(url, agent, clock);
      const second = await timedGet(url, agent, clock);
      agent.destroy();
      // The time the relay held the bytes, on its clock: loopback itself adds nothing to it, however busy the machine.
      expect(first.ms).toBeGreaterThanOrEqual(2 * RTT);
      expect(second.ms).toBeGreaterThanOrEqual(RTT);
      expect(second.ms).toBeLessThan(2 * RTT);
      expect(emu.connections()).toEqual({ tcp: 1, tls: 0, resumed: 0, http2: 0 });
      // The same bytes as without the relay: a 401 envelope for a request without a token.
      const plain = await timedGet(`${direct.baseUrl}/v1/events`, new Agent(), clock);
      expect(second.body).toBe(plain.body);
      expect(emu.linkBytes()).toBe(emu.wireBytes());
    } finally {
      await direct.close();
    }
  });

  it('paces the server bytes through the bandwidth, shared by the connections', async () => {
    const clock = new VirtualClock();
    emu = await startEmulator({
      recordItems: 2000,
      link: { latencyMs: 10, bandwidthMbps: 8, roundTrip: true },
      clock,
    });
    const token = emu.mintTokens().access_token;
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    const page = (i: number) =>
      new Promise<number>((resolve, reject) => {
        get(
          `${emu!.baseUrl}/v1/records?pageSize=1000&pageIndex=${i}`,
          { agent, headers: { authorization: `Bearer ${token}` } },
          (res) => {
            let n = 0;
            res.on('data', (c: Buffer) => (n += c.length));
            res.on('end', () => resolve(n));
            res.on('error', reject);
          },
        ).on('error', reject);
      });
    const started = clock.now();
    const sizes = await Promise.all([page(0), page(1)]);
    const ms = clock.now() - started;
    agent.destroy();
    // 8 Mbit/s is 1000 bytes a millisecond, shared: both bodies take at least their sum at that rate.
    expect(sizes.every((n) => n > 100_000)).toBe(true);
    expect(ms).toBeGreaterThanOrEqual((sizes[0]! + sizes[1]!) / 1000 - 20);
    expect(emu.linkBytes()).toBeGreaterThan(sizes[0]! + sizes[1]!);
    expect(emu.connections().tcp).toBe(2);
  });
});

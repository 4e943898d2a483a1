/**
 * The emulator in its own process for `npm run bench`, so serving pages never competes with the measured
 * client for an event loop. Prints one JSON line `{ "baseUrl": ... }` when ready; answers each `wire` line on
 * stdin with `{ "wireBytes": n }`, the bytes its sockets carried so far; exits when stdin closes.
 * Environment: BENCH_ITEMS (items in /v1/bench, default 100000), BENCH_LATENCY_MS (per page, default 0),
 * BENCH_RECORDS (realistic records in /v1/records, and cursor-based in /v1/records-cursor; default 0),
 * BENCH_LINK_MBPS and BENCH_LINK_LATENCY_MS (a link's bandwidth and the latency before each response; default
 * none), BENCH_MAX_IN_FLIGHT (a rate limit: 429 with Retry-After past that many requests in flight; default none).
 * BENCH_LINK_ROUND_TRIP=1 charges the latency per round trip through a relay in front (test/emulator/relay.ts);
 * BENCH_TLS=1 serves HTTPS with a CA made for this run, whose PEM file the ready line names as `caFile`.
 * BENCH_GROWING (pages of this many items in /v1/growing, growing from 1 KB to 30 MB; default none), BENCH_LOAD_ABOVE
 * and BENCH_LOAD_MS_PER_SQUARE (a server that slows with load, see EmulatorOptions.loadLatency; default none).
 * BENCH_LARGE (pages of one 40 MB item each in /v1/large, after 300 of 1 KB, at --page-size 1; default none).
 * A `stats` line is answered with `{ "wireBytes": n, "throttled": n, "pages": n, "tcp": n, "tls": n, "resumed": n }`:
 * 429s and 200s of collections, connections accepted and TLS handshakes completed (resumed ones among them).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { generateRecords, growingItems, type LinkOptions, startEmulator } from '../test/emulator/index.js';
import { makePki } from '../test/emulator/pki.js';
import { benchItems } from './items.js';

const count = Number(process.env['BENCH_ITEMS'] ?? 100_000);
const latencyMs = Number(process.env['BENCH_LATENCY_MS'] ?? 0);
const records = Number(process.env['BENCH_RECORDS'] ?? 0);
const mbps = process.env['BENCH_LINK_MBPS'];
const link: LinkOptions = {
  ...(mbps === undefined ? {} : { bandwidthMbps: Number(mbps) }),
  latencyMs: Number(process.env['BENCH_LINK_LATENCY_MS'] ?? 0),
  roundTrip: process.env['BENCH_LINK_ROUND_TRIP'] === '1',
};
const pkiDir = process.env['BENCH_TLS'] === '1' ? mkdtempSync(join(tmpdir(), 'idcli-bench-ca-')) : undefined;
const pki = pkiDir === undefined ? undefined : makePki(pkiDir);
const maxInFlight = process.env['BENCH_MAX_IN_FLIGHT'];
const loadAbove = process.env['BENCH_LOAD_ABOVE'];
const growing = process.env['BENCH_GROWING'];
const large = process.env['BENCH_LARGE'];
const emu = await startEmulator({
  latencyMs,
  link,
  recordItems: 0,
  ...(maxInFlight === undefined ? {} : { maxInFlight: Number(maxInFlight) }),
  ...(pki === undefined ? {} : { tls: pki }),
  ...(loadAbove === undefined
    ? {}
    : {
        loadLatency: {
          above: Number(loadAbove),
          msPerSquare: Number(process.env['BENCH_LOAD_MS_PER_SQUARE'] ?? 20),
        },
      }),
});
// Public: the floor and the curl + jq loop fetch the same pages without a token round trip on the server.
emu.setCollection('/v1/bench', { type: 'offset', items: benchItems(count), public: true });
emu.setCollection('/v1/empty', { type: 'offset', items: [], public: true });
if (growing !== undefined) {
  const items = growingItems(Number(growing), 30 * 1024 * 1024);
  emu.setCollection('/v1/growing', { type: 'offset', items, public: true });
}
if (large !== undefined) {
  const small = `{"pad":"${'x'.repeat(1000)}"}`;
  const big = `{"pad":"${'x'.repeat(40 * 1024 * 1024)}"}`;
  const items = [...Array.from({ length: 300 }, () => small), ...Array.from({ length: Number(large) }, () => big)];
  emu.setCollection('/v1/large', { type: 'offset', items, public: true });
}
if (records > 0) {
  const items = generateRecords(records);
  emu.setCollection('/v1/records', { type: 'offset', items, public: true });
  emu.setCollection('/v1/records-cursor', { type: 'cursor', items, public: true });
}
process.stdout.write(`${JSON.stringify({ baseUrl: emu.baseUrl, caFile: pki?.caFile })}\n`);
const commands = createInterface({ input: process.stdin });
commands.on('line', (line) => {
  if (line === 'wire') process.stdout.write(`${JSON.stringify({ wireBytes: emu.wireBytes() })}\n`);
  if (line === 'stats') {
    const collection = emu.requests.filter((r) => r.inFlight !== undefined);
    const count = (status: number) => collection.filter((r) => r.status === status).length;
    const stats = { wireBytes: emu.wireBytes(), throttled: count(429), pages: count(200), ...emu.connections() };
    process.stdout.write(`${JSON.stringify(stats)}\n`);
  }
});
commands.on('close', () => {
  void emu.close().then(() => {
    if (pkiDir !== undefined) rmSync(pkiDir, { recursive: true, force: true });
    process.exit(0);
  });
});

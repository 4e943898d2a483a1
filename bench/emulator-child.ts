/**
 * The emulator in its own process for `npm run bench`, so serving pages never competes with the measured
 * client for an event loop. Prints one JSON line `{ "baseUrl": ... }` when ready; answers each `wire` line on
 * stdin with `{ "wireBytes": n }`, the bytes its sockets carried so far; exits when stdin closes.
 * Environment: BENCH_ITEMS (items in /v1/bench, default 100000), BENCH_LATENCY_MS (per page, default 0),
 * BENCH_RECORDS (realistic records in /v1/records, default 0), BENCH_LINK_MBPS and BENCH_LINK_LATENCY_MS (a
 * link's bandwidth and the latency before each response; default none).
 */
import { createInterface } from 'node:readline';
import { generateRecords, type LinkOptions, startEmulator } from '../test/emulator/index.js';
import { benchItems } from './items.js';

const count = Number(process.env['BENCH_ITEMS'] ?? 100_000);
const latencyMs = Number(process.env['BENCH_LATENCY_MS'] ?? 0);
const records = Number(process.env['BENCH_RECORDS'] ?? 0);
const mbps = process.env['BENCH_LINK_MBPS'];
const link: LinkOptions = {
  ...(mbps === undefined ? {} : { bandwidthMbps: Number(mbps) }),
  latencyMs: Number(process.env['BENCH_LINK_LATENCY_MS'] ?? 0),
};
const emu = await startEmulator({ latencyMs, link, recordItems: 0 });
// Public: the floor and the curl + jq loop fetch the same pages without a token round trip on the server.
emu.setCollection('/v1/bench', { type: 'offset', items: benchItems(count), public: true });
emu.setCollection('/v1/empty', { type: 'offset', items: [], public: true });
if (records > 0) emu.setCollection('/v1/records', { type: 'offset', items: generateRecords(records), public: true });
process.stdout.write(`${JSON.stringify({ baseUrl: emu.baseUrl })}\n`);
const commands = createInterface({ input: process.stdin });
commands.on('line', (line) => {
  if (line === 'wire') process.stdout.write(`${JSON.stringify({ wireBytes: emu.wireBytes() })}\n`);
});
commands.on('close', () => {
  void emu.close().then(() => process.exit(0));
});

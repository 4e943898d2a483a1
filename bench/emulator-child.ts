/**
 * The emulator in its own process for `npm run bench`, so serving pages never competes with the measured
 * client for an event loop. Prints one JSON line `{ "baseUrl": ... }` when ready; exits when stdin closes.
 * Environment: BENCH_ITEMS (items in /v1/bench, default 100000), BENCH_LATENCY_MS (per page, default 0).
 */
import { startEmulator } from '../test/emulator/index.js';
import { benchItems } from './items.js';

const count = Number(process.env['BENCH_ITEMS'] ?? 100_000);
const latencyMs = Number(process.env['BENCH_LATENCY_MS'] ?? 0);
const emu = await startEmulator({ latencyMs });
// Public: the floor and the curl + jq loop fetch the same pages without a token round trip on the server.
emu.setCollection('/v1/bench', { type: 'offset', items: benchItems(count), public: true });
emu.setCollection('/v1/empty', { type: 'offset', items: [], public: true });
process.stdout.write(`${JSON.stringify({ baseUrl: emu.baseUrl })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void emu.close().then(() => process.exit(0));
});

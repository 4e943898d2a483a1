// `npm run emulator`: the contract emulator as a standalone server for trying idcli by hand.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateUsers, MIN_COMPRESSED_BODY, startEmulator } from '../test/emulator/index.js';
import { makePki, type Pki } from '../test/emulator/pki.js';

const USAGE = `usage: npm run emulator -- [--port <n>] [--callback <url>] [--any-port] [--items <n>] [--records <n>]
                            [--bandwidth <Mbit/s>] [--latency <ms>] [--max-page-size <n> [--cap]]
                            [--max-in-flight <n>] [--round-trip] [--tls]
  --port       port to listen on (default: IDCLI_EMULATOR_PORT, else a free one)
  --callback   registered callback of the client (default http://127.0.0.1:8765/callback)
  --any-port   accept any loopback port on the callback (RFC 8252 §7.3), for redirect-uri port 0
  --items      number of items in /v1/users (default 250)
  --records    number of realistic user records in /v1/records (default 1000)
  --bandwidth  Mbit/s shared by every response, as on a link (default: unlimited); compressed bytes count as sent
  --latency    milliseconds paid before every response, as on a link (default 0)
  --max-page-size  the largest pageSize served: a larger one is refused with 400, or with --cap served at that size
  --max-in-flight  answer 429 (Retry-After: 1) to a collection request past that many in flight
  --round-trip charge --latency per round trip instead, through a TCP relay in front that holds each direction's
               bytes for half of it: connecting, TLS handshakes and each request pay it as on a real network
  --tls        serve HTTPS with a CA made for this run (openssl), trusted through NODE_EXTRA_CA_CERTS; HTTP/2
               to a client that asks for it through ALPN, HTTP/1.1 otherwise`;

function fail(message: string): never {
  process.stderr.write(`emulator: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function integer(name: string, raw: string | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) > max) fail(`${name} must be an integer between 0 and ${max}`);
  return Number(raw);
}

function positive(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(raw) || !(Number(raw) > 0)) fail(`${name} must be a positive number`);
  return Number(raw);
}

function parseFlags() {
  try {
    return parseArgs({
      options: {
        port: { type: 'string' },
        callback: { type: 'string' },
        'any-port': { type: 'boolean' },
        latency: { type: 'string' },
        items: { type: 'string' },
        records: { type: 'string' },
        bandwidth: { type: 'string' },
        'max-page-size': { type: 'string' },
        cap: { type: 'boolean' },
        'max-in-flight': { type: 'string' },
        'round-trip': { type: 'boolean' },
        tls: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    return fail(err instanceof Error ? err.message : 'bad arguments');
  }
}

const values = parseFlags();
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const port = integer('--port', values.port ?? process.env['IDCLI_EMULATOR_PORT'], 0, 65535);
const latencyMs = integer('--latency', values.latency, 0);
const items = integer('--items', values.items, 250, 10_000_000);
const records = integer('--records', values.records, 1000, 10_000_000);
const bandwidthMbps = positive('--bandwidth', values.bandwidth);
const maxPageSize =
  values['max-page-size'] === undefined ? undefined : integer('--max-page-size', values['max-page-size'], 0);
const maxInFlight =
  values['max-in-flight'] === undefined ? undefined : integer('--max-in-flight', values['max-in-flight'], 0);

const roundTrip = values['round-trip'] ?? false;
// The CA lives as long as the emulator: made for this run, removed when it stops.
const pkiDir = values.tls ? mkdtempSync(join(tmpdir(), 'idcli-emulator-ca-')) : undefined;
let pki: Pki | undefined;
try {
  pki = pkiDir === undefined ? undefined : makePki(pkiDir);
} catch (err) {
  fail(`cannot make a CA: ${(err as Error).message}`);
}
const removeCa = () => {
  if (pkiDir !== undefined) rmSync(pkiDir, { recursive: true, force: true });
};

let emu: Awaited<ReturnType<typeof startEmulator>>;
try {
  emu = await startEmulator({
    port,
    link: { latencyMs, roundTrip, ...(bandwidthMbps === undefined ? {} : { bandwidthMbps }) },
    ...(pki === undefined ? {} : { tls: pki }),
    recordItems: records,
    ...(values.callback === undefined ? {} : { callbackUrl: values.callback }),
    loopbackAnyPort: values['any-port'] ?? false,
    ...(maxPageSize === undefined ? {} : { maxPageSize, overMaxPageSize: values.cap ? 'cap' : 'refuse' }),
    ...(maxInFlight === undefined ? {} : { maxInFlight }),
  });
} catch (err) {
  const code = (err as NodeJS.ErrnoException).code;
  removeCa();
  fail(code === 'EADDRINUSE' ? `port ${port} is already in use` : `cannot start: ${(err as Error).message}`);
}
if (items !== 250) emu.setCollection('/v1/users', { type: 'offset', items: generateUsers(items) });

const { client, user } = emu;
process.stdout.write(`idcli contract emulator listening on ${emu.baseUrl}

client    name ${client.name}
          id ${client.id}
          secret ${client.secret}   (never needed: idcli is a public client)
          callback ${client.callbackUrl}${client.loopbackAnyPort ? '   (any loopback port accepted)' : ''}
user      ${user.email} / ${user.password} (${user.name})
data      /v1/users offset-based, ${items} items; /v1/records offset-based, ${records} realistic records;
          /v1/events cursor-based, 230 items; gzip and br when asked (bodies of ${MIN_COMPRESSED_BODY} bytes and more)
link      ${bandwidthMbps === undefined ? 'unlimited bandwidth' : `${bandwidthMbps} Mbit/s shared by all responses`}, ${roundTrip ? `${latencyMs} ms round trip (relay)` : `${latencyMs} ms before each response`}
${pki === undefined ? '' : `tls       a CA made for this run: ${pki.caFile} (removed on exit)\n`}
export IDCLI_BASE_URL=${emu.baseUrl}
export IDCLI_CLIENT_ID=${client.id}
export IDCLI_CLIENT_NAME=${client.name}
export IDCLI_REDIRECT_URI=${client.callbackUrl}
${pki === undefined ? '' : `export NODE_EXTRA_CA_CERTS=${pki.caFile}\n`}
Ctrl-C to stop.
`);

let closing = false;
async function shutdown(signal: string): Promise<void> {
  if (closing) return;
  closing = true;
  const sent = (emu.wireBytes() / 1e6).toFixed(1);
  process.stderr.write(`emulator: ${signal}, closing (${sent} MB sent)\n`);
  await emu.close();
  removeCa();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

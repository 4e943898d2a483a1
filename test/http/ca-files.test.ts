/**
 * CA files that are not CA files, with the BUILT CLI in a process of its own (a hang is the fault): SSL_CERT_FILE,
 * SSL_CERT_DIR and NODE_EXTRA_CA_CERTS naming a FIFO, an endless device, a directory, garbage or a file past the
 * bound. The run goes on within a deadline, with one warning naming the variable, the path and why; the HTTPS front
 * it talks to is trusted through another variable, or, when the bad one was to trust it, the run ends with the usual
 * untrusted-certificate error.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../emulator/index.js';
import { plainItems } from '../list/helpers.js';
import { BIN, baseEnv, type CliResult, runCli, tempDir } from '../support/cli.js';
import { makePki, type Pki, STACK_FRAME, startTlsFront, type TlsFront } from './proxy-fixtures.js';

const ITEMS = plainItems(5);
/** Past MAX_CA_FILE (src/http/trust.ts). */
const OVERSIZED = 17 * 1024 * 1024;
/** Far beyond a healthy run; a run that waits on a FIFO is killed here and fails the test. */
const DEADLINE_MS = 30_000;

let emu: Emulator;
let front: TlsFront;
let pki: Pki;
let dir: { path: string; cleanup: () => Promise<void> };
const at = (name: string) => join(dir.path, name);

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error('build the CLI first: npm run build');
  dir = await tempDir('idcli-ca-files-');
  pki = makePki(dir.path);
  emu = await startEmulator();
  emu.setCollection('/v1/items', { type: 'offset', items: ITEMS, linkStyle: 'relative' });
  front = await startTlsFront(emu.baseUrl, pki);
  execFileSync('mkfifo', [at('fifo')]);
  mkdirSync(at('a-directory'));
  writeFileSync(at('garbage.pem'), 'not a certificate\n');
  // A certificate at the start: only the bound can refuse it.
  writeFileSync(at('oversized.pem'), `${readFileSync(pki.caFile, 'latin1')}\n${'a'.repeat(OVERSIZED)}`);
  // A hashed directory whose entries are links to each kind of bad file.
  mkdirSync(at('hashed'));
  const targets = ['fifo', '/dev/zero', 'a-directory', 'garbage.pem', 'oversized.pem'];
  targets.forEach((t, i) => symlinkSync(t.startsWith('/') ? t : at(t), join(at('hashed'), `0000000${i}.0`)));
}, 60_000);

afterAll(async () => {
  await front?.close();
  await emu?.close();
  await dir?.cleanup();
});

async function list(extra: Record<string, string>): Promise<CliResult> {
  const cfg = await tempDir('idcli-ca-files-cfg-');
  try {
    return await runCli(['list', '/v1/items', '--max-retries', '0'], {
      timeoutMs: DEADLINE_MS,
      env: baseEnv({
        IDCLI_BASE_URL: front.url,
        IDCLI_CONFIG_DIR: cfg.path,
        IDCLI_CREDENTIAL_STORE: 'file',
        IDCLI_ACCESS_TOKEN: emu.mintTokens().access_token,
        ...extra,
      }),
    });
  } finally {
    await cfg.cleanup();
  }
}

interface Bad {
  name: string;
  path: () => string;
  why: string;
}

const bad: Bad[] = [
  { name: 'a FIFO', path: () => at('fifo'), why: 'it is a FIFO, not a file' },
  { name: '/dev/zero', path: () => '/dev/zero', why: 'it is a device, not a file' },
  { name: 'a directory', path: () => at('a-directory'), why: 'it is a directory, not a file' },
  { name: 'garbage', path: () => at('garbage.pem'), why: 'it holds no PEM certificate' },
  { name: 'an oversized file', path: () => at('oversized.pem'), why: 'it is larger than 16 MB' },
];

function expectFinished(r: CliResult): void {
  // Killed at the deadline, the run has a signal and no code.
  expect(r.signal, r.stderr).toBeNull();
  expect(r.stderr).not.toMatch(STACK_FRAME);
}

describe.each(bad)('SSL_CERT_FILE naming $name', (b) => {
  it('is skipped with one warning, and the run goes on', async () => {
    const r = await list({ SSL_CERT_FILE: b.path(), NODE_EXTRA_CA_CERTS: pki.caFile });
    expectFinished(r);
    expect(r.stderr).toBe(`warning: ignoring SSL_CERT_FILE ${b.path()}: ${b.why}\n`);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(ITEMS.map((i) => `${i}\n`).join(''));
  });
});

describe('SSL_CERT_DIR', () => {
  it.each([
    { name: 'a FIFO', path: () => at('fifo') },
    { name: '/dev/zero', path: () => '/dev/zero' },
    { name: 'a file', path: () => at('garbage.pem') },
  ])('naming $name is skipped with one warning, and the run goes on', async (b) => {
    const r = await list({ SSL_CERT_DIR: b.path(), NODE_EXTRA_CA_CERTS: pki.caFile });
    expectFinished(r);
    expect(r.stderr).toBe(`warning: ignoring SSL_CERT_DIR ${b.path()}: it is not a directory\n`);
    expect(r.code).toBe(0);
  });

  it('a hashed directory of links to a FIFO, /dev/zero, a directory, garbage and an oversized file: the run goes on', async () => {
    const r = await list({ SSL_CERT_DIR: at('hashed'), NODE_EXTRA_CA_CERTS: pki.caFile });
    expectFinished(r);
    expect(r.code, r.stderr).toBe(0);
    // Where Node reads the directory itself (tls.getCACertificates), it skips such entries in silence; where idcli
    // reads it, each is named once.
    for (const line of r.stderr.split('\n').filter(Boolean))
      expect(line).toMatch(/^warning: ignoring \S+\/0000000\d\.0 in SSL_CERT_DIR: it (is|holds) /);
  });
});

describe.each(bad.filter((b) => b.name !== 'a FIFO'))('NODE_EXTRA_CA_CERTS naming $name', (b) => {
  // A FIFO there stops Node itself, before or while it loads TLS, whatever idcli does (docs/cli.md).
  it('is skipped with one warning; the certificate it was to trust is not trusted', async () => {
    const r = await list({ NODE_EXTRA_CA_CERTS: b.path() });
    expectFinished(r);
    const lines = r.stderr.split('\n').filter(Boolean);
    expect(lines[0]).toBe(`warning: ignoring NODE_EXTRA_CA_CERTS ${b.path()}: ${b.why}`);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^error: GET .* the server's TLS certificate is not trusted/),
    ]);
    expect(r.code).toBe(4);
  });
});

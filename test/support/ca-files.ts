/**
 * The CA files that are not CA files (a FIFO, an endless device, a directory, garbage, a file past the bound), an
 * HTTPS front on loopback serving the emulator with a throwaway CA's certificate, and what each bad file is told as.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { type Emulator, startEmulator } from '../emulator/index.js';
import { plainItems } from './list.js';
import { baseEnv, type CliResult, tempDir } from './cli.js';
import { makePki, type Pki, STACK_FRAME, startTlsFront, type TlsFront } from './proxy.js';

export const ITEMS = plainItems(5);
/** Past MAX_CA_FILE (src/http/trust.ts). */
const OVERSIZED = 17 * 1024 * 1024;

export interface CaFiles {
  pki: Pki;
  /** A path in the suite's directory of bad files. */
  at(name: string): string;
  /** The environment of `idcli list /v1/items` against the front, in config directory `configDir`. */
  env(configDir: string, extra: Record<string, string>): Record<string, string | undefined>;
}

/** Registers the suite's set-up: the bad files, the CA and the front, made once and removed after the suite. */
export function useCaFiles(): CaFiles {
  let emu: Emulator;
  let front: TlsFront;
  let pki: Pki;
  let dir: { path: string; cleanup: () => Promise<void> };
  const at = (name: string) => join(dir.path, name);

  beforeAll(async () => {
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

  return {
    get pki() {
      return pki;
    },
    at,
    env: (configDir, extra) =>
      baseEnv({
        IDCLI_BASE_URL: front.url,
        IDCLI_CONFIG_DIR: configDir,
        IDCLI_CREDENTIAL_STORE: 'file',
        IDCLI_ACCESS_TOKEN: emu.mintTokens().access_token,
        ...extra,
      }),
  };
}

export interface Bad {
  name: string;
  path: (f: CaFiles) => string;
  why: string;
}

/** Each kind of bad file; `blocks` where reading it as a file would wait or read for ever. */
export const BAD: (Bad & { blocks: boolean })[] = [
  { name: 'a FIFO', path: (f) => f.at('fifo'), why: 'it is a FIFO, not a file', blocks: true },
  { name: '/dev/zero', path: () => '/dev/zero', why: 'it is a device, not a file', blocks: true },
  { name: 'a directory', path: (f) => f.at('a-directory'), why: 'it is a directory, not a file', blocks: false },
  { name: 'garbage', path: (f) => f.at('garbage.pem'), why: 'it holds no PEM certificate', blocks: false },
  { name: 'an oversized file', path: (f) => f.at('oversized.pem'), why: 'it is larger than 16 MB', blocks: false },
];

/** The run ended by itself (a run killed at its deadline has a signal and no code), with no stack trace. */
export function expectFinished(r: CliResult): void {
  expect(r.signal, r.stderr).toBeNull();
  expect(r.stderr).not.toMatch(STACK_FRAME);
}

export const listed = ITEMS.map((i) => `${i}\n`).join('');

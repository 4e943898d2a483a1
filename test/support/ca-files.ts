/**
 * The CA files that are not CA files (a FIFO, an endless device, a directory, garbage, a file past the bound), an
 * HTTPS front on loopback serving the emulator with a throwaway CA's certificate (for these and the other TLS tests),
 * and what each bad file is told as.
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
  /**
   * `idcli list /v1/items --max-retries 0` against the front with `extra` in its environment, in a config directory
   * of its own, through `run` (in this process, or the built CLI).
   */
  list(
    extra: Record<string, string>,
    run: (args: string[], env: Record<string, string | undefined>) => Promise<CliResult>,
  ): Promise<CliResult>;
}

/** The emulator behind an HTTPS front whose certificate a throwaway CA signed, made once for a suite. */
export interface TlsFronted {
  /** The suite's directory, which holds the CA. */
  readonly dir: string;
  readonly pki: Pki;
  readonly emu: Emulator;
  readonly front: TlsFront;
}

/**
 * Registers, for the calling suite, a throwaway CA (failing with a clear message where openssl is missing) and an
 * HTTPS front on loopback serving the emulator with a certificate for 127.0.0.1, the emulator serving `items` at
 * /v1/items; all are closed and removed after the suite.
 */
export function useTlsFront(items: readonly string[]): TlsFronted {
  let made: TlsFronted | undefined;
  let dir: { path: string; cleanup: () => Promise<void> } | undefined;
  let emu: Emulator | undefined;
  let front: TlsFront | undefined;

  beforeAll(async () => {
    dir = await tempDir('idcli-tls-');
    const pki = makePki(dir.path);
    emu = await startEmulator();
    // Relative links resolve against the https:// URL idcli was given, so every page goes through the front.
    emu.setCollection('/v1/items', { type: 'offset', items: [...items], linkStyle: 'relative' });
    front = await startTlsFront(emu.baseUrl, pki);
    made = { dir: dir.path, pki, emu, front };
  }, 60_000);

  afterAll(async () => {
    await front?.close();
    await emu?.close();
    await dir?.cleanup();
  });

  const now = (): TlsFronted => {
    if (made === undefined) throw new Error('the TLS front exists only while its suite runs');
    return made;
  };
  return {
    get dir() {
      return now().dir;
    },
    get pki() {
      return now().pki;
    },
    get emu() {
      return now().emu;
    },
    get front() {
      return now().front;
    },
  };
}

/** Registers the suite's set-up: the TLS front, and the bad files made once beside its CA and removed with it. */
export function useCaFiles(): CaFiles {
  const tls = useTlsFront(ITEMS);
  const at = (name: string) => join(tls.dir, name);

  beforeAll(() => {
    execFileSync('mkfifo', [at('fifo')]);
    mkdirSync(at('a-directory'));
    writeFileSync(at('garbage.pem'), 'not a certificate\n');
    // A certificate at the start: only the bound can refuse it.
    writeFileSync(at('oversized.pem'), `${readFileSync(tls.pki.caFile, 'latin1')}\n${'a'.repeat(OVERSIZED)}`);
    // A hashed directory whose entries are links to each kind of bad file.
    mkdirSync(at('hashed'));
    const targets = ['fifo', '/dev/zero', 'a-directory', 'garbage.pem', 'oversized.pem'];
    targets.forEach((t, i) => symlinkSync(t.startsWith('/') ? t : at(t), join(at('hashed'), `0000000${i}.0`)));
  });

  const env = (configDir: string, extra: Record<string, string>) =>
    baseEnv({
      IDCLI_BASE_URL: tls.front.url,
      IDCLI_CONFIG_DIR: configDir,
      IDCLI_CREDENTIAL_STORE: 'file',
      IDCLI_ACCESS_TOKEN: tls.emu.mintTokens().access_token,
      ...extra,
    });
  return {
    get pki() {
      return tls.pki;
    },
    at,
    async list(extra, run) {
      const cfg = await tempDir('idcli-ca-files-cfg-');
      try {
        return await run(['list', '/v1/items', '--max-retries', '0'], env(cfg.path, extra));
      } finally {
        await cfg.cleanup();
      }
    },
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

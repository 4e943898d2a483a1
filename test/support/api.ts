/**
 * Shared set-up of the `idcli api` tests, in this process (test/commands/api/) and as a process (test/e2e/api.test.ts):
 * a harness over a scheme with a sign-in stored in the file store, so the token is in no environment variable or
 * argument of any process, and an item at /v1/users/42; after each test, no secret in any output.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import type { Emulator } from '../emulator/index.js';
import { baseEnv } from './cli.js';
import { expectNoSecrets, type Harness, harness } from './harness.js';
import { shell } from './list.js';
import type { Scheme } from './scheme.js';
import { storeSignIn } from './sign-in.js';

/** The item at /v1/users/42: pretty-printed, an integer beyond 2^53, escapes. */
export const ITEM = '{\n  "id": 9007199254740993,\n  "name": "Ada",\n  "note": "caf\\u00e9 \\"x\\""\n}\n';

/**
 * Registers, for every test of the calling suite, a signed-in harness over `scheme` with ITEM stored, handed to
 * `use` before the test with the list of access tokens printed on purpose (by `token`), which the leak check allows.
 */
export function eachSignedInTest(scheme: Scheme, use: (h: Harness, printed: string[]) => void): void {
  let h: Harness;
  let printed: string[];

  beforeEach(async () => {
    h = await harness({ scheme });
    printed = [];
    await storeSignIn({ emu: h.emu, configDir: join(h.dir, 'config'), ttlSec: 3600 });
    h.emu.setResource('/v1/users/42', ITEM);
    use(h, printed);
  });

  afterEach(async () => {
    // No token, code or verifier in any output of the test, --verbose traces and error messages included.
    expectNoSecrets(h, printed);
    expect(h.emu.errors).toEqual([]);
    await h.close();
  });
}

/** The environment that points `idcli api` at the emulator's resource API. */
export function apiEnv(emu: Emulator): { IDCLI_API_BASE_URL: string } {
  return { IDCLI_API_BASE_URL: `${emu.baseUrl}/v1` };
}

/** Requests the emulator saw outside /oauth/, all or those for `path`. */
export function apiCalls(emu: Emulator, path?: string): Emulator['requests'] {
  return emu.requests.filter((r) => !r.path.startsWith('/oauth/') && (path === undefined || r.path === path));
}

/** A FIFO in `dir`, for an --input that arrives only as something writes to it. */
export async function fifo(dir: string): Promise<string> {
  const path = join(dir, 'body.fifo');
  expect((await shell(`mkfifo "${path}"`, baseEnv())).code).toBe(0);
  return path;
}

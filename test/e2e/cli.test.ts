// A process is the point: the build writes the version into the CLI it makes, so only the built CLI can show it.
import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { baseEnv, runCli, tempDir } from '../support/cli.js';

let dir: { path: string; cleanup: () => Promise<void> };
let env: Record<string, string | undefined>;
beforeEach(async () => {
  dir = await tempDir();
  env = baseEnv({ IDCLI_CONFIG_DIR: dir.path, IDCLI_CREDENTIAL_STORE: 'file' });
});
afterEach(() => dir.cleanup());

describe('help and version', () => {
  it('--version prints the package version', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    const r = await runCli(['--version'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });
});

/**
 * What the CLI itself answers for completion, in process: `completion` with an unknown shell, and `__profiles`, which
 * the scripts call for profile names and which refuses a config.json holding a name --profile would refuse. The
 * scripts in real shells are in test/e2e/completion.test.ts.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseEnv, tempDir } from '../../support/cli.js';
import { hostileConfig, hostileNames } from '../../support/hostile-profiles.js';
import { runCommand } from '../../support/run-command.js';

let dir: { path: string; cleanup: () => Promise<void> };
let env: Record<string, string | undefined>;
beforeAll(async () => {
  dir = await tempDir();
  env = { ...baseEnv(), IDCLI_CONFIG_DIR: join(dir.path, 'cfg') };
  for (const p of ['default', 'staging', 'prod-eu']) {
    const r = await runCommand(['--profile', p, 'config', 'set', 'scope', 'x'], { env });
    expect(r.code).toBe(0);
  }
});
afterAll(() => dir.cleanup());

describe('usage', () => {
  it('an unknown shell is a usage error', async () => {
    const r = await runCommand(['completion', 'tcsh'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('bash, zsh, fish');
  });
});

describe('profile names are data, never code', () => {
  it('__profiles refuses a config.json with a name --profile would refuse, and prints none of its names', async () => {
    const marks = join(dir.path, 'marks');
    // Names that would run a command or glob in a shell, as test/e2e/completion.test.ts gives each shell.
    const hostile = hostileNames(marks);
    const cfg = await hostileConfig(join(dir.path, 'hostile-cfg'), hostile);
    const r = await runCommand(['__profiles'], { env: { ...env, IDCLI_CONFIG_DIR: cfg } });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/config\.json: '.*' is not a valid profile name/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    const ok = await runCommand(['__profiles'], { env });
    expect(ok.stdout.split('\n').filter(Boolean).sort()).toEqual(['default', 'prod-eu', 'staging']);
  });
});

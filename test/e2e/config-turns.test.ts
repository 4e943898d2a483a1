/**
 * Needs a process: the changes race across processes, which take turns on a lock file.
 * `config set` and `unset` run by many processes at once: each change lands (docs/cli.md, "config"), because they
 * take turns on a lock and read config.json only once they hold it. The set-up of each round runs in process.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseEnv, runCli, tempDir } from '../support/cli.js';
import { runCommand } from '../support/run-command.js';

const UUID = '4f9c0a1e-1234-4abc-8def-0123456789ab';
const ROUNDS = 3;
const OWN_PROFILES = 14;

describe('config set and unset at once', () => {
  it('every change of 20 processes lands, round after round', { timeout: 240_000 }, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const dir = await tempDir();
      try {
        const env = baseEnv({ IDCLI_CONFIG_DIR: dir.path, IDCLI_CREDENTIAL_STORE: 'file' });
        const run = (args: string[]) => runCli(args, { env, timeoutMs: 120_000 });
        // One profile gets a mix: three keys removed and three added, each by its own process.
        for (const [k, v] of [
          ['scope', 'read:users'],
          ['ui-locales', 'de'],
          ['client-name', 'probe'],
        ] as const)
          expect((await runCommand(['--profile', 'shared', 'config', 'set', k, v], { env })).code).toBe(0);
        const lines = [
          ...Array.from({ length: OWN_PROFILES }, (_, i) => [
            '--profile',
            `p${i}`,
            'config',
            'set',
            'base-url',
            `https://id${i}.example.com`,
          ]),
          ...['scope', 'ui-locales', 'client-name'].map((k) => ['--profile', 'shared', 'config', 'unset', k]),
          ['--profile', 'shared', 'config', 'set', 'base-url', 'https://shared.example.com'],
          ['--profile', 'shared', 'config', 'set', 'client-id', UUID],
          ['--profile', 'shared', 'config', 'set', 'redirect-uri', 'http://127.0.0.1:8765/callback'],
        ];
        expect(lines).toHaveLength(20);
        const results = await Promise.all(lines.map(run));
        results.forEach((r, i) => expect(r.code, `${lines[i]!.join(' ')}: ${r.stderr}`).toBe(0));
        const file: unknown = JSON.parse(await readFile(join(dir.path, 'config.json'), 'utf8'));
        expect(file, `round ${round}`).toEqual({
          profiles: {
            ...Object.fromEntries(
              Array.from({ length: OWN_PROFILES }, (_, i) => [`p${i}`, { 'base-url': `https://id${i}.example.com` }]),
            ),
            shared: {
              'base-url': 'https://shared.example.com',
              'client-id': UUID,
              'redirect-uri': 'http://127.0.0.1:8765/callback',
            },
          },
        });
      } finally {
        await dir.cleanup();
      }
    }
  });
});

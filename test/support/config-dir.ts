/**
 * The environment and the verdict of the config-directory tests, in process (test/config.dir.test.ts) and as another
 * user (test/e2e/config-dir.test.ts): a client that needs no service, and a one-line configuration error.
 */
import { expect } from 'vitest';
import { baseEnv, type CliResult } from './cli.js';

/** A run's environment: a client of a service never reached, the file store, and `env`. */
export function configEnv(env: Record<string, string | undefined>): Record<string, string | undefined> {
  return baseEnv({
    IDCLI_BASE_URL: 'https://id.example.com',
    IDCLI_CLIENT_ID: '4f9c0a1e-1234-4abc-8def-0123456789ab',
    IDCLI_CLIENT_NAME: 'my-app',
    IDCLI_CREDENTIAL_STORE: 'file',
    ...env,
  });
}

/** Exit 2 with one error line holding `message`, and no stack trace. */
export function expectConfigError(r: CliResult, message: string): void {
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).toMatch(/^error: [^\n]+\n$/);
  expect(r.stderr).toContain(message);
  expect(r.stderr).not.toMatch(/unexpected internal error|\n\s+at /);
}

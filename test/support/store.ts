/** Helpers shared by the store tests: records, and TypeScript child processes that can be killed mid-write. */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CredentialKey, CredentialRecord } from '../../src/store/record.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = join(ROOT, 'test', 'support', 'fixtures');

export const KEY: CredentialKey = {
  baseUrl: 'https://id.example.test',
  clientId: '0b4f3c1e-5a6d-4e7f-8a9b-0c1d2e3f4a5b',
  profile: 'default',
};

export function sampleRecord(overrides: Partial<CredentialRecord> = {}): CredentialRecord {
  return {
    version: 1,
    refreshToken: 'rt-SECRET-refresh-0001',
    codeVerifier: 'v'.repeat(43),
    accessToken: 'at-SECRET-access-0001',
    tokenType: 'Bearer',
    expiresAt: 1_900_000_000_000,
    idToken: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.',
    scope: 'openid idcli',
    updatedAt: 1_800_000_000_000,
    generation: 1,
    ...overrides,
  };
}

/** Runs test/support/fixtures/<name>.ts with tsx, as a separate process (so it can be SIGKILLed or race others). */
export function runFixture(
  name: string,
  args: string[],
  env: Record<string, string | undefined> = process.env,
): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', join(FIXTURES, `${name}.ts`), ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Resolves once the child printed `line` on stdout; rejects if it exits first. */
export function waitForLine(child: ChildProcess, line: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    let out = '';
    let err = '';
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
    });
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.split('\n').includes(line)) resolvePromise();
    });
    child.on('exit', (code, signal) =>
      reject(new Error(`fixture exited (${signal ?? code}) before "${line}": ${err}`)),
    );
  });
}

export function waitForExit(
  child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
  });
}

/** A pid that certainly belonged to a process that has exited. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  const pid = child.pid;
  await new Promise((r) => child.on('exit', r));
  if (pid === undefined) throw new Error('no pid');
  return pid;
}

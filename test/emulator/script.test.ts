import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('scripts/emulator.ts', { timeout: 60_000 }, () => {
  it('prints the base URL, client and user, serves, and closes cleanly on SIGTERM', async () => {
    const args = ['--port', '0', '--items', '7', '--records', '3', '--bandwidth', '50', '--latency', '5'];
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/emulator.ts', ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    let out = '';
    const banner = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ctrl-C')) resolve(out);
      });
      child.on('close', () => reject(new Error(`exited early: ${out}`)));
    });
    const baseUrl = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1] as string;
    expect(baseUrl).toBeTruthy();
    expect(banner).toMatch(/id [0-9a-f-]{36}/);
    expect(banner).toContain('callback http://127.0.0.1:8765/callback');
    expect(banner).toContain('alice@example.com / correct-horse-battery');
    expect(banner).toContain('/v1/records offset-based, 3 realistic records');
    expect(banner).toContain('50 Mbit/s shared by all responses, 5 ms before each response');
    const res = await fetch(`${baseUrl}/v1/users`);
    expect(res.status).toBe(401);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('exits 2 on a bad flag', async () => {
    for (const flag of [
      ['--latency', 'soon'],
      ['--bandwidth', '0'],
      ['--bandwidth', 'fast'],
    ]) {
      const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/emulator.ts', ...flag], {
        cwd: ROOT,
        stdio: 'ignore',
      });
      expect(await new Promise((resolve) => child.on('close', resolve))).toBe(2);
    }
  });

  it('--help lists the link and data options', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/emulator.ts', '--help'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
    for (const option of ['--bandwidth <Mbit/s>', '--latency <ms>', '--records <n>', '--items <n>', '--port <n>']) {
      expect(out).toContain(option);
    }
  });
});

/** The checks that keep test files apart in a shared test process (process-hygiene.ts) see what a file leaves. */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { leftovers, snapshot } from './process-state.js';

describe('leftovers: what a test file leaves in its process', () => {
  it('a server left listening, until it is closed', async () => {
    const before = snapshot();
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      expect(await leftovers(before, 0)).toEqual(['still open: TCPServerWrap ×1']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(await leftovers(before, 5_000)).toEqual([]);
  });

  it('a timer left to fire in a later file, until it is cleared', async () => {
    const before = snapshot();
    const timer = setTimeout(() => {}, 60_000);
    try {
      expect(await leftovers(before, 0)).toEqual(['still open: Timeout ×1']);
    } finally {
      clearTimeout(timer);
    }
    expect(await leftovers(before, 0)).toEqual([]);
  });

  it('a handle whose close is under way is waited for', async () => {
    const before = snapshot();
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    server.close();
    expect(await leftovers(before, 5_000)).toEqual([]);
  });

  it("a child that was unref'd, as a browser is started, until it exits", async () => {
    const before = snapshot();
    const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    child.unref();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      expect(await leftovers(before, 0)).toEqual([`still open: child ${child.pid} (sleep 60)`]);
    } finally {
      child.kill();
      await exited;
    }
    expect(await leftovers(before, 5_000)).toEqual([]);
  });

  it('process.exitCode set', async () => {
    const before = snapshot();
    const code = process.exitCode;
    process.exitCode = 3;
    try {
      expect(await leftovers(before, 0)).toEqual([`process.exitCode 3, was ${String(code)}`]);
    } finally {
      process.exitCode = code;
    }
    expect(await leftovers(before, 0)).toEqual([]);
  });

  it('a signal listener left registered', async () => {
    const before = snapshot();
    const listener = (): void => {};
    process.on('SIGTERM', listener);
    try {
      const found = await leftovers(before, 0);
      expect(found).toEqual([
        `SIGTERM listeners ${process.listenerCount('SIGTERM') - 1} → ${process.listenerCount('SIGTERM')}`,
      ]);
    } finally {
      process.off('SIGTERM', listener);
    }
    expect(await leftovers(before, 0)).toEqual([]);
  });

  it('process.env, the working directory and the umask changed', async () => {
    const before = snapshot();
    const name = 'IDCLI_PROCESS_STATE_TEST';
    const cwd = process.cwd();
    const umask = process.umask(0o077);
    process.env[name] = '1';
    process.chdir('/');
    try {
      expect(await leftovers(before, 0)).toEqual([
        `process.env.${name} changed`,
        `the working directory is /, was ${cwd}`,
        `umask 77, was ${umask.toString(8)}`,
      ]);
    } finally {
      delete process.env[name];
      process.chdir(cwd);
      process.umask(umask);
    }
    expect(await leftovers(before, 0)).toEqual([]);
  });
});

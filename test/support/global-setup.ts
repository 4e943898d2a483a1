/**
 * Runs once per test run, in vitest's own process. Copies the built CLI and the Node that runs it, and the single
 * executable when IDCLI_TEST_EXE names one, where any user can run them (see forOtherUsers() in cli.ts), and removes
 * the copies when the run ends. Once per run rather than per test process: the test processes are stopped with
 * SIGTERM, which runs none of their exit handlers, so a copy of theirs would be left behind.
 */
import { chmod, cp, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

declare module 'vitest' {
  export interface ProvidedContext {
    /** The CLI as any user can run it: its Node, its bin script, and the executable under test if there is one. */
    forOtherUsers: { node: string; bin: string; exe?: string };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'idcli-cli-'));
  for (const part of ['bin', 'dist', 'package.json']) await cp(join(ROOT, part), join(dir, part), { recursive: true });
  await cp(process.execPath, join(dir, 'node'));
  await chmodTree(dir);
  await chmod(join(dir, 'node'), 0o755);
  const copies: { node: string; bin: string; exe?: string } = {
    node: join(dir, 'node'),
    bin: join(dir, 'bin', 'idcli.cjs'),
  };
  const exe = process.env.IDCLI_TEST_EXE;
  if (exe) {
    await cp(exe, join(dir, 'idcli'));
    await chmod(join(dir, 'idcli'), 0o755);
    copies.exe = join(dir, 'idcli');
  }
  project.provide('forOtherUsers', copies);
  return () => rm(dir, { recursive: true, force: true });
}

async function chmodTree(path: string): Promise<void> {
  const isDir = (await stat(path)).isDirectory();
  await chmod(path, isDir ? 0o755 : 0o644);
  if (isDir) for (const name of await readdir(path)) await chmodTree(join(path, name));
}

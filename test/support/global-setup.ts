/**
 * Runs once per test run, in vitest's own process. Copies the built CLI and the Node that runs it, and the single
 * executable when IDCLI_TEST_EXE names one, where any user can run them (see forOtherUsers() in cli.ts), and removes
 * the copies when the run ends. Once per run rather than per test process: the test processes are stopped with
 * SIGTERM, which runs none of their exit handlers, so a copy of theirs would be left behind.
 */
import { rmSync } from 'node:fs';
import { chmod, cp, lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
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
  // Vitest ends its process on SIGINT or SIGTERM (a run interrupted at the terminal, a CI job cancelled) without the
  // teardown below: the copy, a whole Node among it, would be left in the temp directory at every interruption. First
  // of the exit listeners: vitest's own calls process.exit() again, which ends the process before any listener after it.
  const removeAtExit = () => rmSync(dir, { recursive: true, force: true });
  process.prependOnceListener('exit', removeAtExit);
  await copyForOtherUsers(ROOT, dir);
  await cp(process.execPath, join(dir, 'node'));
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
  return async () => {
    process.off('exit', removeAtExit);
    await rm(dir, { recursive: true, force: true });
  };
}

/**
 * Copies the CLI's bin/, dist/ and package.json from `root` into `dir`, readable by any user. Links are copied as what
 * they point to: a link kept would lead another user back into the work tree, and the modes set here would then be
 * set, through it, on the files it points to, wherever they are.
 */
export async function copyForOtherUsers(root: string, dir: string): Promise<void> {
  for (const part of ['bin', 'dist', 'package.json'])
    await cp(join(root, part), join(dir, part), { recursive: true, dereference: true });
  await chmodTree(dir);
}

/** Makes a tree readable by all; a link, should one be there, is left alone rather than followed. */
async function chmodTree(path: string): Promise<void> {
  const info = await lstat(path);
  if (info.isSymbolicLink()) return;
  await chmod(path, info.isDirectory() ? 0o755 : 0o644);
  if (info.isDirectory()) for (const name of await readdir(path)) await chmodTree(join(path, name));
}

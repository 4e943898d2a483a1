/** The command `idcli exec` runs: no shell, stdio its own, stop signals passed on, its exit status told as a shell does. */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Invocation } from '../../argv/define.js';
import { ExitCode, IdcliError } from '../../errors.js';
import { clip, printable } from '../../printable.js';
import { errCode } from '../../shape.js';

export interface ChildSpec {
  argv: readonly [string, ...string[]];
  env: Record<string, string | undefined>;
  relaySignals: Invocation['relaySignals'];
  /** Says, with --verbose, what became of a stop signal. */
  verbose: (msg: string) => void;
}

/** Runs the command to its end; its exit status, 128 + n when signal n ended it. */
export function runChild({ argv, env, relaySignals, verbose }: ChildSpec): Promise<number> {
  const [file, ...args] = argv;
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: 'inherit', env: definedOnly(env) });
    const stopRelay = relaySignals((signal) => {
      // Ctrl-C at a terminal reaches every process of its foreground group, the command too: a second SIGINT from
      // here would read as Ctrl-C pressed twice, which many programs take as "quit now" (sudo does the same).
      if (signal === 'SIGINT' && inTerminalForeground()) {
        verbose('SIGINT not passed on: the terminal sent it to the command too');
        return;
      }
      verbose(`${signal} passed on to the command`);
      child.kill(signal);
    });
    child.once('error', (err) => {
      stopRelay();
      reject(startFailure(file, err, env.PATH));
    });
    child.once('exit', (code, signal) => {
      stopRelay();
      resolve(code ?? 128 + (signal ? constants.signals[signal] : 0));
    });
  });
}

function startFailure(file: string, err: unknown, path: string | undefined): unknown {
  const shown = clip(printable(file));
  // execve's ENOENT for a file that is there means its #! interpreter is not; bash and dash exit 127 for it too.
  if (errCode(err) === 'ENOENT' && found(file, path))
    return new IdcliError(
      'EXEC_COMMAND_NOT_FOUND',
      `cannot run ${shown}: its interpreter (the #! line) was not found`,
      ExitCode.COMMAND_NOT_FOUND,
      { hint: 'check the path on its first line' },
    );
  if (errCode(err) === 'ENOENT')
    return new IdcliError('EXEC_COMMAND_NOT_FOUND', `command not found: ${shown}`, ExitCode.COMMAND_NOT_FOUND, {
      hint: 'check its name, or give its path',
    });
  if (errCode(err) === 'EACCES')
    return new IdcliError(
      'EXEC_COMMAND_NOT_RUNNABLE',
      `cannot run ${shown}: permission denied`,
      ExitCode.COMMAND_NOT_RUNNABLE,
      {
        hint: 'check that it is an executable file',
      },
    );
  return err;
}

/** Whether `file` exists: as given when it holds a `/`, else in a directory of `path`, as spawn looks for it. */
function found(file: string, path: string | undefined): boolean {
  if (file.includes('/')) return existsSync(file);
  return (path ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, file)));
}

/**
 * Whether this process is in its terminal's foreground process group (Linux: /proc/self/stat's pgrp and tpgid), where
 * the terminal's own SIGINT went to the command as well. Elsewhere false: a signal is then always passed on.
 */
function inTerminalForeground(): boolean {
  try {
    const stat = readFileSync('/proc/self/stat', 'latin1');
    // The fields after the command name, which may hold spaces and parentheses: state ppid pgrp session tty tpgid.
    const [, , pgrp, , , tpgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return tpgid !== undefined && Number(tpgid) > 0 && tpgid === pgrp;
  } catch {
    return false;
  }
}

function definedOnly(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

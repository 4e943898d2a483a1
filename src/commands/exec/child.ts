/** The command `idcli exec` runs: no shell, stdio its own, stop signals passed on, its exit status told as a shell does. */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { Invocation } from '../../argv/define.js';
import { ExitCode, IdcliError } from '../../errors.js';
import { clip, printable } from '../../printable.js';
import { errCode } from '../../shape.js';

export interface ChildSpec {
  argv: readonly [string, ...string[]];
  env: Record<string, string | undefined>;
  relaySignals: Invocation['relaySignals'];
}

/** Runs the command to its end; its exit status, 128 + n when signal n ended it. */
export function runChild({ argv, env, relaySignals }: ChildSpec): Promise<number> {
  const [file, ...args] = argv;
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: 'inherit', env: definedOnly(env) });
    const stopRelay = relaySignals((signal) => void child.kill(signal));
    child.once('error', (err) => {
      stopRelay();
      reject(startFailure(file, err));
    });
    child.once('exit', (code, signal) => {
      stopRelay();
      resolve(code ?? 128 + (signal ? constants.signals[signal] : 0));
    });
  });
}

function startFailure(file: string, err: unknown): unknown {
  const shown = clip(printable(file));
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

function definedOnly(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

// Which commands take the stop signals over before they start (src/cli.ts): those that may wait on the network or a
// person do, so Ctrl-C is idcli's to answer from the first moment; a quick one leaves them to Node's default action
// until it needs them. Run in process, with the signal sent the moment the command's settings load, before any
// command reads its stop signal: there, only that rule decides who hears it.
import { chmod } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { baseEnv, tempDir } from './support/cli.js';
import { runCommand, StopSignals } from './support/run-command.js';

let dir: { path: string; cleanup: () => Promise<void> };

beforeEach(async () => {
  dir = await tempDir();
  // A config directory others may write: loading the settings tightens it and says so, the moment to signal at.
  await chmod(dir.path, 0o777);
});
afterEach(() => dir.cleanup());

const WARNING = /^warning: .* was accessible by other users \(mode 0777\); tightened to 0700\n$/;

/** Runs `args`, sending SIGINT as the config directory's warning is written. */
function interruptedAtSettings(args: string[]) {
  const signals = new StopSignals();
  return runCommand(args, {
    env: baseEnv({ IDCLI_CONFIG_DIR: dir.path, IDCLI_CREDENTIAL_STORE: 'file' }),
    stdin: 'protocol=https\nhost=git.example.com\n\n',
    signals,
    onStderr: (text) => {
      if (text.startsWith('warning:')) signals.send('SIGINT');
    },
  });
}

describe('stop signals taken over before a command starts', () => {
  for (const args of [
    ['config', 'get', 'base-url'],
    ['config', 'list'],
  ]) {
    it(`${args.join(' ')} (not quick): idcli answers SIGINT, exit 130 once the command ends`, async () => {
      const r = await interruptedAtSettings(args);
      expect(r.signal).toBeNull();
      expect(r.code, r.stderr).toBe(130);
      expect(r.stderr).toMatch(WARNING);
    });
  }

  for (const args of [['token'], ['credential', 'git', 'get']]) {
    it(`${args.join(' ')} (quick): SIGINT finds no handler and ends the run as it would a process`, async () => {
      const r = await interruptedAtSettings(args);
      expect(r.code, r.stderr).toBeNull();
      expect(r.signal).toBe('SIGINT');
      expect(r.stderr).toMatch(WARNING);
      expect(r.stdout).toBe('');
    });
  }
});

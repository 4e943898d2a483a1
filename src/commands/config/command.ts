/** `idcli config`: read and write the settings of a profile in config.json. */
import { argument, defineCommand, defineGroup, type Invocation } from '../../argv/define.js';
import { clockOf } from '../../clock.js';
import { assertConfigKey, type ConfigFile, validateSetting } from '../../config.js';
import { loadConfigFile, prepareConfigDir, saveConfigFile } from '../../config-file.js';
import { ExitCode, type IdcliError, lockLost } from '../../errors.js';

/** Written now, the file read before the lock was taken would erase the change of the run that took it. */
function configLost(lockPath: string): IdcliError {
  const consequence = 'config.json was left as that run made it, without this change';
  return lockLost(lockPath, ExitCode.USAGE, consequence, 'run the command again');
}

const key = argument({ name: 'key', description: 'setting name' });

/** The config file and the profile, and nothing else resolved: a bad setting elsewhere can be fixed here. */
function target({ deps, settings }: Invocation) {
  const io = { warn: (msg: string) => deps.log.warn(msg) };
  const load = () => loadConfigFile(settings.configDir(), io);
  return {
    profile: () => settings.profile(),
    load,
    /**
     * Runs that change the file at once take turns, and each reads the file only once it holds the lock: a file read
     * before would be saved over another run's change. `edit` returns false when it changed nothing.
     */
    change: async (edit: (file: ConfigFile) => boolean) => {
      const { configLockPath, withLock } = await import('../../store/lock.js');
      const configDir = settings.configDir();
      // Read first only for its faults, named as every command names them; the copy changed is the one read below.
      await load();
      await prepareConfigDir(configDir, io);
      const lockPath = configLockPath(configDir);
      // Said without --verbose: a wait of seconds with nothing on the screen looks like a hang.
      const onWait = (who: string) =>
        deps.log.info(`waiting for ${who ? `another idcli (${who})` : 'another process'} to finish with ${lockPath}`);
      await withLock(
        lockPath,
        async (lease) => {
          const file = await load();
          // A run paused while another took the lock over would save the file it read, erasing the other's change.
          const beforeCommit = () => lease.confirm(configLost);
          if (edit(file)) await saveConfigFile(configDir, file, { ...io, beforeCommit });
        },
        { signal: deps.signal, clock: clockOf(deps), onWait, guards: 'the configuration' },
      );
    },
  };
}

export const command = defineGroup({
  name: 'config',
  summary: 'read and write settings of a profile',
  description: 'Read and write settings of a profile in config.json.',
  subcommands: [
    defineCommand({
      name: 'set',
      summary: 'set a key of the profile',
      description: 'Set a key of the profile.',
      options: { key, value: argument({ name: 'value', description: 'new value' }) },
      examples: ['idcli config set base-url https://id.example.com'],
      async run(o, invocation) {
        const k = assertConfigKey(o.key);
        const checked = validateSetting(k, o.value);
        const t = target(invocation);
        const profile = t.profile();
        await t.change((file) => {
          file.profiles[profile] = { ...file.profiles[profile], [k]: checked };
          return true;
        });
      },
    }),
    defineCommand({
      name: 'get',
      summary: 'print a key of the profile',
      description: 'Print a key of the profile (nothing when unset).',
      options: { key },
      examples: ['idcli config get redirect-uri'],
      async run(o, invocation) {
        const k = assertConfigKey(o.key);
        const t = target(invocation);
        const value = (await t.load()).profiles[t.profile()]?.[k];
        // Like `git config --get`: an unset key prints nothing, so `$(idcli config get x)` is empty, not an error text.
        if (value !== undefined) invocation.deps.stdout.write(`${value}\n`);
      },
    }),
    defineCommand({
      name: 'unset',
      summary: 'remove a key from the profile',
      description: 'Remove a key from the profile.',
      options: { key },
      examples: ['idcli config unset scope'],
      async run(o, invocation) {
        const k = assertConfigKey(o.key);
        const t = target(invocation);
        const profile = t.profile();
        await t.change((file) => {
          const entries = file.profiles[profile];
          if (!entries || entries[k] === undefined) return false;
          delete entries[k];
          if (Object.keys(entries).length === 0) delete file.profiles[profile];
          return true;
        });
      },
    }),
    defineCommand({
      name: 'list',
      summary: 'print the keys of the profile',
      description: 'Print the keys of the profile as key=value lines.',
      options: {},
      examples: ['idcli --profile staging config list'],
      async run(_o, invocation) {
        const t = target(invocation);
        const entries = (await t.load()).profiles[t.profile()] ?? {};
        for (const [k, v] of Object.entries(entries)) invocation.deps.stdout.write(`${k}=${v}\n`);
      },
    }),
  ],
  examples: [
    'idcli config set base-url https://id.example.com',
    'idcli config set client-id 4f9c0a1e-1234-4abc-8def-0123456789ab',
    'idcli --profile staging config list',
    'idcli config get redirect-uri',
  ],
});

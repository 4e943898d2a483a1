/**
 * idcli's command-line surface: the global options and the list of commands (one module each in src/cmd/). The
 * parser, the help pages and the shell completions all read it.
 */
import { api } from '../cmd/api.js';
import { completion, profiles } from '../cmd/completion.js';
import { config } from '../cmd/config.js';
import { doctor } from '../cmd/doctor.js';
import { list } from '../cmd/list.js';
import { login } from '../cmd/login.js';
import { logout } from '../cmd/logout.js';
import { status } from '../cmd/status.js';
import { token } from '../cmd/token.js';
import { CONFIG_KEYS, OPTION_KEYS, PROFILE } from '../config.js';
import { type CommandSpec, option, type OptionSpec } from './define.js';

export type { ArgSpec, CommandSpec, OptionSpec, OptionType } from './define.js';

/** The settings with a global flag, under their field's name (see settingFlags in config.ts). */
const settingOptions = OPTION_KEYS.filter((k) => 'global' in CONFIG_KEYS[k]).map((k): OptionSpec => ({
  ...option.setting(k),
  key: CONFIG_KEYS[k].field,
}));

export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  {
    ...option.string({
      flag: '--profile',
      value: '<name>',
      description: 'profile to use',
      env: PROFILE.env,
      defaultText: PROFILE.default,
    }),
    key: 'profile',
  },
  ...settingOptions,
  {
    ...option.boolean({ flag: '--verbose', description: 'trace requests on stderr, secrets redacted' }),
    key: 'verbose',
  },
  { ...option.boolean({ flag: '--quiet', description: 'only errors and warnings on stderr' }), key: 'quiet' },
];

export const COMMANDS: readonly CommandSpec[] = [
  login,
  token,
  api,
  list,
  status,
  logout,
  config,
  doctor,
  completion,
  profiles,
];

/**
 * idcli's command-line surface: the global options and the list of commands (one module each in src/cmd/). The
 * parser, the help pages and the shell completions all read it.
 */
import { api } from './api.js';
import { completion, profiles } from './completion.js';
import { config } from './config.js';
import { doctor } from './doctor.js';
import { list } from './list.js';
import { login } from './login.js';
import { logout } from './logout.js';
import { status } from './status.js';
import { token } from './token.js';
import { OPTION_KEYS, SETTINGS } from '../config.js';
import { option, type OptionSpec, splitTable, type Surface } from '../argv/define.js';

/** The options accepted before or after any command; the settings with a global flag are listed under their field's name (see settingFlags in config.ts). */
const globalOptions = (): OptionSpec[] =>
  splitTable({
    profile: option.string({
      flag: '--profile',
      value: '<name>',
      description: 'profile to use',
      env: SETTINGS.profile.env,
      defaultText: SETTINGS.profile.default,
    }),
    ...Object.fromEntries(
      OPTION_KEYS.filter((k) => 'global' in SETTINGS[k]).map((k) => [SETTINGS[k].field, option.setting(k)]),
    ),
    verbose: option.boolean({ flag: '--verbose', description: 'trace requests on stderr, secrets redacted' }),
    quiet: option.boolean({ flag: '--quiet', description: 'only errors and warnings on stderr' }),
  }).options;

let globals: readonly OptionSpec[] | undefined;

/**
 * What the parser, the help pages and the completion scripts are given. The global options are built on first
 * use, like each command's: `idcli token` without flags never reads them.
 */
export const SURFACE: Surface = {
  get globals() {
    return (globals ??= globalOptions());
  },
  commands: [login, token, api, list, status, logout, config, doctor, completion, profiles],
};
export const COMMANDS = SURFACE.commands;

/** idcli's command-line surface, read by the parser, the help pages and the shell completions. */
import { OPTION_KEYS, SETTINGS } from '../config.js';
import { type CommandEntry, option, type OptionSpec, splitTable, type Surface } from '../argv/define.js';
// Bundled with the entry file, unlike every other command: scripts run `idcli token` before every API call, so
// printing a cached token loads no further module.
import { command as token } from './token/command.js';
/** The options accepted before or after any command: the settings with a global flag, then --verbose and --quiet. */
const globalOptions = (): OptionSpec[] =>
  splitTable({
    ...Object.fromEntries(
      OPTION_KEYS.filter((k) => 'global' in SETTINGS[k]).map((k) => [SETTINGS[k].field, option.setting(k)]),
    ),
    verbose: option.boolean({ flag: '--verbose', description: 'trace requests on stderr, secrets redacted' }),
    quiet: option.boolean({ flag: '--quiet', description: 'only errors and warnings on stderr' }),
  }).options;

let globals: readonly OptionSpec[] | undefined;

/** The global options are built on first use: `idcli token` without flags never reads them. */
export const SURFACE: Surface = {
  get globals() {
    return (globals ??= globalOptions());
  },
  // The others are loaded when their name is read: a run compiles its own command's code only.
  commands: [
    { name: 'login', load: async () => (await import('./login/command.js')).command },
    { name: 'token', load: () => Promise.resolve(token) },
    { name: 'api', load: async () => (await import('./api/command.js')).command },
    { name: 'list', load: async () => (await import('./list/command.js')).command },
    { name: 'status', load: async () => (await import('./status/command.js')).command },
    { name: 'logout', load: async () => (await import('./logout/command.js')).command },
    { name: 'config', load: async () => (await import('./config/command.js')).command },
    { name: 'doctor', load: async () => (await import('./doctor/command.js')).command },
    { name: 'credential', load: async () => (await import('./credential/command.js')).command },
    { name: 'exec', load: async () => (await import('./exec/command.js')).command },
    { name: 'completion', load: async () => (await import('./completion/command.js')).command },
    { name: '__profiles', hidden: true, load: async () => (await import('./completion/profiles.js')).command },
  ] satisfies CommandEntry[],
};

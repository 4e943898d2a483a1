import { argument, defineCommand } from '../argv/define.js';
import { loadConfigFile } from '../config.js';

export const completion = defineCommand({
  name: 'completion',
  summary: 'print a shell completion script',
  description: 'Print a shell completion script.',
  options: () => ({
    shell: argument({ name: 'shell', description: 'bash, zsh or fish', choices: ['bash', 'zsh', 'fish'] }),
  }),
  examples: [
    'idcli completion bash > ~/.local/share/bash-completion/completions/idcli',
    'idcli completion zsh > "${fpath[1]}/_idcli"',
    'idcli completion fish > ~/.config/fish/completions/idcli.fish',
  ],
  async run(o, inv) {
    const { completionScript } = await import('../completion/scripts.js');
    inv.deps.stdout.write(completionScript(o.shell, inv.surface));
  },
});

/**
 * The profile names, one a line: the completion scripts run it to offer them. Not part of the documented surface.
 * Each is a name --profile accepts (parseConfigFile refuses a file with any other), so none is shell syntax.
 */
export const profiles = defineCommand({
  name: '__profiles',
  summary: '',
  description: '',
  options: () => ({}),
  examples: [],
  hidden: true,
  async run(_o, { deps, settings }) {
    // Completion runs this on every Tab: a warning there would break the shell's line.
    const file = await loadConfigFile(settings.configDir());
    for (const name of Object.keys(file.profiles)) deps.stdout.write(`${name}\n`);
  },
});

/** `idcli completion`: a shell's completion script, generated from every command's definition. */
import { argument, defineCommand, loadAll } from '../../argv/define.js';
import { completionScript } from './scripts.js';

export const command = defineCommand({
  name: 'completion',
  summary: 'print a shell completion script',
  description: 'Print a shell completion script.',
  options: { shell: argument({ name: 'shell', description: 'bash, zsh or fish', choices: ['bash', 'zsh', 'fish'] }) },
  examples: [
    'idcli completion bash > ~/.local/share/bash-completion/completions/idcli',
    'idcli completion zsh > "${fpath[1]}/_idcli"',
    'idcli completion fish > ~/.config/fish/completions/idcli.fish',
  ],
  async run(o, { deps, surface }) {
    const listed = await loadAll(surface, { hidden: false });
    deps.stdout.write(completionScript(o.shell, surface.globals, listed));
  },
});

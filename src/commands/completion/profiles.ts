/** `idcli __profiles`, run by the completion scripts: the profile names, one a line (none is shell syntax). */
import { defineCommand } from '../../argv/define.js';
import { loadConfigFile } from '../../config-file.js';

export const command = defineCommand({
  name: '__profiles',
  summary: '',
  description: '',
  options: {},
  examples: [],
  async run(_o, { deps, settings }) {
    // Completion runs this on every Tab: a warning there would break the shell's line.
    const file = await loadConfigFile(settings.configDir());
    for (const name of Object.keys(file.profiles)) deps.stdout.write(`${name}\n`);
  },
});

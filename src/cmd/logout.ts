import { defineCommand } from '../argv/define.js';

export const logout = defineCommand({
  name: 'logout',
  summary: 'remove the stored credentials',
  description: 'Remove the stored credentials of this profile from every credential store.',
  options: () => ({}),
  examples: ['idcli logout', 'idcli --profile staging logout'],
  async run(_o, inv) {
    const { runLogout } = await import('../commands/logout.js');
    await runLogout(await inv.context());
  },
});

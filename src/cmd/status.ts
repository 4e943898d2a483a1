import { defineCommand, option, type OptionsOf } from '../argv/define.js';

const options = () => ({ json: option.boolean({ flag: '--json', description: 'print the status as JSON' }) });
export type StatusOptions = OptionsOf<ReturnType<typeof options>>;

export const status = defineCommand({
  name: 'status',
  summary: 'show who is signed in and where credentials are kept',
  description: 'Show who is signed in, with which settings, and where the credentials are stored.',
  options,
  examples: ['idcli status', 'idcli status --json | jq .signedIn'],
  async run(o, inv) {
    const { runStatus } = await import('../commands/status.js');
    await runStatus(o, await inv.context());
  },
});

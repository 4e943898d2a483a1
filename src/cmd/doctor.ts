import { defineCommand, option, type OptionsOf } from '../argv/define.js';

const options = () => ({ json: option.boolean({ flag: '--json', description: 'print the checks as JSON' }) });
export type DoctorOptions = OptionsOf<ReturnType<typeof options>>;

export const doctor = defineCommand({
  name: 'doctor',
  summary: 'check configuration, network, port and keychain',
  description: 'Check the configuration, the network, the loopback port and the keychain, each with a fix.',
  options,
  examples: ['idcli doctor', 'idcli doctor --json | jq \'.checks[] | select(.status != "pass")\''],
  async run(o, inv) {
    const { runDoctor } = await import('../commands/doctor.js');
    // Doctor reports a broken configuration as a failed check, so it resolves the context itself.
    await runDoctor(o, inv);
  },
});

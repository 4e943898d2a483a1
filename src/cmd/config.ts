import { argument, defineCommand, defineGroup, type Invocation } from '../argv/define.js';
import type { ConfigTarget } from '../commands/config.js';

const key = argument({ name: 'key', description: 'setting name' });
const impl = () => import('../commands/config.js');

function target({ deps, settings }: Invocation): ConfigTarget {
  return { settings, warn: (msg: string) => deps.log.warn(msg), stdout: deps.stdout };
}

export const config = defineGroup({
  name: 'config',
  summary: 'read and write settings of a profile',
  description: 'Read and write settings of a profile in config.json.',
  subcommands: [
    defineCommand({
      name: 'set',
      summary: 'set a key of the profile',
      description: 'Set a key of the profile.',
      options: () => ({ key, value: argument({ name: 'value', description: 'new value' }) }),
      examples: ['idcli config set base-url https://id.example.com'],
      run: async (o, inv) => (await impl()).configSet(o.key, o.value, target(inv)),
    }),
    defineCommand({
      name: 'get',
      summary: 'print a key of the profile',
      description: 'Print a key of the profile (nothing when unset).',
      options: () => ({ key }),
      examples: ['idcli config get redirect-uri'],
      run: async (o, inv) => (await impl()).configGet(o.key, target(inv)),
    }),
    defineCommand({
      name: 'unset',
      summary: 'remove a key from the profile',
      description: 'Remove a key from the profile.',
      options: () => ({ key }),
      examples: ['idcli config unset scope'],
      run: async (o, inv) => (await impl()).configUnset(o.key, target(inv)),
    }),
    defineCommand({
      name: 'list',
      summary: 'print the keys of the profile',
      description: 'Print the keys of the profile as key=value lines.',
      options: () => ({}),
      examples: ['idcli --profile staging config list'],
      run: async (_o, inv) => (await impl()).configList(target(inv)),
    }),
  ],
  examples: [
    'idcli config set base-url https://id.example.com',
    'idcli config set client-id 4f9c0a1e-1234-4abc-8def-0123456789ab',
    'idcli --profile staging config list',
    'idcli config get redirect-uri',
  ],
});

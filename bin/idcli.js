#!/usr/bin/env node
// `idcli --version` is how scripts probe for idcli; it answers without loading the CLI.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const { readFileSync } = await import('node:fs');
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
} else {
  const { run } = await import('../dist/cli.js');
  run();
}

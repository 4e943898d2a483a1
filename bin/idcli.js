#!/usr/bin/env node
// `idcli --version` is how scripts probe for idcli: it answers without loading the CLI or setting up stdout's stream.
import { readFileSync, writeSync } from 'node:fs';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  try {
    writeSync(1, `${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
  } catch (err) {
    // A reader that went away (EPIPE) is not an error (cli-contract "Streams and exit codes").
    if (err.code !== 'EPIPE') throw err;
  }
} else {
  const { run } = await import('../dist/cli.js');
  run();
}

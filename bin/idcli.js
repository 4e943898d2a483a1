#!/usr/bin/env node
// `idcli --version` and `idcli --help` answer without loading the CLI or setting up stdout's stream: scripts probe
// with the one and people type the other. The help page is rendered at build time (scripts/build.mjs).
// process.getBuiltinModule rather than `import … from 'node:fs'`: the ESM import of node:fs loads the streams stack.
const { readFileSync, writeSync } = process.getBuiltinModule('node:fs');

const args = process.argv.slice(2);
const only = args.length === 1 ? args[0] : args.length === 0 ? '--help' : undefined;
if (only === '--version' || only === '-V' || only === '--help' || only === '-h') {
  const text =
    only === '--help' || only === '-h'
      ? readFileSync(new URL('../dist/help.txt', import.meta.url), 'utf8')
      : `${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`;
  try {
    writeSync(1, text);
  } catch (err) {
    // A reader that went away (EPIPE) is not an error (cli-contract "Streams and exit codes").
    if (err.code !== 'EPIPE') throw err;
  }
} else {
  const { run } = await import('../dist/cli.js');
  run();
}

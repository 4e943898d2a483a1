#!/usr/bin/env node
// CommonJS, like dist/: loaded synchronously, without Node's ES module loader (see scripts/build.mjs).
// `idcli --version` and `idcli --help` answer without loading the CLI: scripts probe with the one and people type
// the other. The help page is rendered at build time (scripts/build.mjs).
'use strict';
const { readFileSync, writeSync } = require('node:fs');
const { join } = require('node:path');

const args = process.argv.slice(2);
const only = args.length === 1 ? args[0] : args.length === 0 ? '--help' : undefined;
if (only === '--version' || only === '-V' || only === '--help' || only === '-h') {
  const text =
    only === '--help' || only === '-h'
      ? readFileSync(join(__dirname, '..', 'dist', 'help.txt'), 'utf8')
      : `${JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')).version}\n`;
  try {
    writeSync(1, text);
  } catch (err) {
    // A reader that went away (EPIPE) is not an error; any other failed write is (docs/cli.md, "Streams").
    if (err.code !== 'EPIPE') {
      process.exitCode = 1;
      try {
        writeSync(
          2,
          `error: cannot write the output (${err.code ?? err.message}); check the disk or the file it goes to\n`,
        );
      } catch {
        // stderr is best effort: the exit code still tells.
      }
    }
  }
} else {
  require('../dist/cli.cjs').run();
}

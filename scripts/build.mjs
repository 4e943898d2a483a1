// Builds dist/ with esbuild: the whole CLI as one CommonJS file, dist/cli.cjs. CommonJS because Node loads it
// synchronously, without the ES module loader that an ES module entry (and every chunk of a split build) goes
// through. One file because esbuild splits chunks only for ES modules; in the one file, each module's body runs
// when first imported, so the modules of commands other than the one running cost only their parse.
// Dependencies (undici, open, @napi-rs/keyring) stay installed packages, imported where they are used.
// The new build is written beside dist/ and swapped in with renames, so a process started from dist/ during a
// rebuild never finds it half-deleted.
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
const next = resolve(`dist.next-${process.pid}`);
const old = `dist.old-${process.pid}`;

await build({
  entryPoints: ['src/cli.ts'],
  outfile: `${next}/cli.cjs`,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.18',
  packages: 'external',
  define: { IDCLI_VERSION: JSON.stringify(pkg.version), 'import.meta.url': 'importMetaUrl' },
  // CommonJS has no import.meta: the stand-in is this file's URL, computed once as it loads.
  inject: [fileURLToPath(new URL('./import-meta-url.js', import.meta.url))],
  // Whitespace and syntax only: start-up compiles every byte, and names stay readable in the output.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
});

// The top-level help page is static: render it once here, so bin/idcli.cjs can print `idcli --help` without
// loading the CLI (start-up budget). It comes from the same code path as any other help page.
const { main } = createRequire(import.meta.url)(`${next}/cli.cjs`);
let help = '';
const sink = { write: (s) => ((help += s), true), isTTY: false };
const code = await main({
  argv: ['node', 'idcli', '--help'],
  env: {},
  stdout: sink,
  stderr: sink,
  print: sink.write,
  interrupt: () => new AbortController().signal,
});
if (code !== 0 || !help.startsWith('Usage: idcli')) throw new Error(`rendering the help page failed (exit ${code})`);
await writeFile(`${next}/help.txt`, help);

await rename('dist', old).catch((err) => {
  if (err.code !== 'ENOENT') throw err;
});
await rename(next, 'dist');
await rm(old, { recursive: true, force: true });

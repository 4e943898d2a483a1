// Bundles src/cli.ts with code splitting: the start-up chunk holds only the CLI shell, and each command's module
// (and what it imports) loads when that command runs. The new build is written beside dist/ and swapped in with
// renames, so a process started from dist/ during a rebuild never finds it half-deleted.
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { build } from 'esbuild';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
const next = `dist.next-${process.pid}`;
const old = `dist.old-${process.pid}`;
await build({
  entryPoints: ['src/cli.ts'],
  outdir: next,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  // Dependencies are bundled too: resolving and reading many small files is a large part of start-up time.
  // The keyring binding is native and stays external.
  external: ['@napi-rs/keyring'],
  sourcemap: false,
  legalComments: 'none',
  // Bundled CommonJS dependencies call require() for builtins; give ESM chunks one.
  banner: { js: "import { createRequire as __idcliCreateRequire } from 'node:module'; const require = __idcliCreateRequire(import.meta.url);" },
  define: { IDCLI_VERSION: JSON.stringify(pkg.version) },
  logLevel: 'warning',
});
// The top-level help page is static: render it once here, so bin/idcli.js can print `idcli --help` without
// loading the CLI (start-up budget). It comes from the same code path as any other help page.
const { main } = await import(new URL(`../${next}/cli.js`, import.meta.url).href);
let help = '';
const sink = { write: (s) => ((help += s), true), isTTY: false };
const code = await main({ argv: ['node', 'idcli', '--help'], env: {}, stdout: sink, stderr: sink, signal: new AbortController().signal });
if (code !== 0 || !help.startsWith('Usage: idcli')) throw new Error(`rendering the help page failed (exit ${code})`);
await writeFile(`${next}/help.txt`, help);

// Chunk names carry content hashes, so old chunks in the swapped-out tree are never referenced by the new entry.
await rename('dist', old).catch((err) => {
  if (err.code !== 'ENOENT') throw err;
});
await rename(next, 'dist');
await rm(old, { recursive: true, force: true });

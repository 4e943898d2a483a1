// Bundles src/cli.ts with code splitting: the start-up chunk holds only the CLI shell, and each command's module
// (and what it imports) loads when that command runs. The new build is written beside dist/ and swapped in with
// renames, so a process started from dist/ during a rebuild never finds it half-deleted.
import { readFile, rename, rm } from 'node:fs/promises';
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
// Chunk names carry content hashes, so old chunks in the swapped-out tree are never referenced by the new entry.
await rename('dist', old).catch((err) => {
  if (err.code !== 'ENOENT') throw err;
});
await rename(next, 'dist');
await rm(old, { recursive: true, force: true });

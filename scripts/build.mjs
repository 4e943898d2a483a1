// Bundles src/cli.ts with code splitting: the start-up chunk holds only the CLI shell, and each command's module
// (and what it imports) loads when that command runs.
import { readFile, rm } from 'node:fs/promises';
import { build } from 'esbuild';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
await rm(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: ['src/cli.ts'],
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  packages: 'external',
  sourcemap: false,
  legalComments: 'none',
  define: { IDCLI_VERSION: JSON.stringify(pkg.version) },
  logLevel: 'warning',
});

// Builds dist/ with esbuild: the CLI as CommonJS chunks. esbuild splits chunks only for ES modules, so it bundles
// and splits to ES modules in memory, then converts each chunk to CommonJS. CommonJS because Node loads it
// synchronously, without the ES module loader that ES modules (and import() of a CommonJS file) go through; chunks
// because a cached `idcli token` then compiles only the code on its path, not every command's.
// Dependencies (undici, open, @napi-rs/keyring) stay installed packages, imported where they are used.
// The new build is written beside dist/ and swapped in with renames, so a process started from dist/ during a
// rebuild never finds it half-deleted.
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, resolve } from 'node:path';
import { build, transform } from 'esbuild';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
const next = resolve(`dist.next-${process.pid}`);
const old = `dist.old-${process.pid}`;

const TARGET = 'node20.18';
const { outputFiles } = await build({
  entryPoints: ['src/cli.ts'],
  outdir: next,
  outExtension: { '.js': '.cjs' },
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  write: false,
  platform: 'node',
  target: TARGET,
  packages: 'external',
  define: { IDCLI_VERSION: JSON.stringify(pkg.version) },
  // Whitespace and syntax only: start-up compiles every byte, and names stay readable in the output.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
});

const chunks = outputFiles.map((f) => basename(f.path));
await mkdir(next, { recursive: true });
for (const file of outputFiles) {
  // A chunk reached by import() is required inside a promise instead, as esbuild writes import() for CommonJS
  // itself: import() of a file would start the ES module loader. Packages keep import(): open is an ES module.
  let code = file.text;
  for (const chunk of chunks) {
    code = code.replaceAll(`import("./${chunk}")`, `Promise.resolve().then(()=>require("./${chunk}"))`);
  }
  // The same for Node's builtins and CommonJS packages: an import() of one goes through the ES module loader and
  // builds a facade that reads every export, lazy ones included (node:http's WebSocket getter loads Node's own
  // undici, which needs WebAssembly).
  code = code.replace(/import\("([^".][^"]*)"\)/g, (call, specifier) =>
    isCommonJs(specifier) ? `Promise.resolve().then(()=>require("${specifier}"))` : call,
  );
  const out = await transform(code, {
    format: 'cjs',
    platform: 'node',
    target: TARGET,
    minifyWhitespace: true,
    minifySyntax: true,
    sourcefile: basename(file.path),
  });
  // e.g. import.meta, which CommonJS has not: esbuild would leave an empty object in its place.
  if (out.warnings.length > 0) throw new Error(`${basename(file.path)}: ${out.warnings[0].text}`);
  await writeFile(file.path, out.code);
}

/** A builtin, or an installed package that is not an ES module (open is one: it keeps import()). */
function isCommonJs(specifier) {
  if (specifier.startsWith('node:')) return true;
  const name = specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
  const manifest = JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8'));
  return manifest.type !== 'module';
}

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

// Chunk names carry content hashes, so old chunks in the swapped-out tree are never referenced by the new entry.
await rename('dist', old).catch((err) => {
  if (err.code !== 'ENOENT') throw err;
});
await rename(next, 'dist');
await rm(old, { recursive: true, force: true });

// Builds dist/: the CLI as CommonJS chunks, bundled by Rollup, each file's TypeScript stripped and its output
// minified by esbuild. CommonJS because Node loads it synchronously, without the ES module loader; chunks because a
// cached `idcli token` then compiles only the code on its path, not every command's. Rollup rather than esbuild's
// own bundler: esbuild splits what the entry and a command's chunk share into further chunks even though the entry
// is always loaded first (evanw/esbuild#3780), and every file Node requires costs start-up time.
// Dependencies (undici, open, @napi-rs/keyring) stay installed packages, imported where they are used.
// The new build is written beside dist/ and swapped in with renames, so a process started from dist/ during a
// rebuild never finds it half-deleted.
import { existsSync, readFileSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { transform } from 'esbuild';
import { rollup } from 'rollup';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
const next = resolve(`dist.next-${process.pid}`);
const old = `dist.old-${process.pid}`;
const TARGET = 'node20.18';

/** Throws on any warning: e.g. import.meta, which CommonJS has not, or a circular chunk. */
async function esbuild(code, file, options) {
  const out = await transform(code, { target: TARGET, sourcefile: file, logLevel: 'silent', ...options });
  if (out.warnings.length > 0) throw new Error(`${file}: ${out.warnings[0].text}`);
  return { code: out.code, map: null };
}

const bundle = await rollup({
  input: 'src/cli.ts',
  // Node's builtins and the installed packages; everything else is a path into src/.
  external: (id) => !id.startsWith('.') && !isAbsolute(id),
  onwarn(warning) {
    throw new Error(`rollup: ${warning.message}`);
  },
  plugins: [
    {
      name: 'idcli-typescript',
      // The sources import `./x.js` (the name after compilation); the file on disk is `./x.ts`.
      resolveId(source, importer) {
        if (!importer || !source.startsWith('.')) return null;
        const ts = resolve(importer, '..', source.replace(/\.js$/, '.ts'));
        return existsSync(ts) ? ts : null;
      },
      transform(code, id) {
        if (!id.endsWith('.ts')) return null;
        return esbuild(code, id, { loader: 'ts', define: { IDCLI_VERSION: JSON.stringify(pkg.version) } });
      },
      // A chunk, a builtin or a CommonJS package is required inside a promise: import() would start the ES module
      // loader, and import() of a builtin builds a facade that reads every export, lazy ones included (node:http's
      // WebSocket getter loads Node's own undici, which needs WebAssembly). Only ES module packages (open) keep it.
      renderDynamicImport({ targetChunk, targetModuleId }) {
        if (!targetChunk && !isCommonJs(targetModuleId)) return null;
        return { left: 'Promise.resolve().then(()=>require(', right: '))' };
      },
      // Whitespace and syntax only: start-up compiles every byte, and names stay readable in the output.
      renderChunk: (code, chunk) => esbuild(code, chunk.fileName, { minifyWhitespace: true, minifySyntax: true }),
    },
  ],
  // The entry may export what the command chunks import from it, instead of handing it all to one more chunk.
  preserveEntrySignatures: 'allow-extension',
});
await bundle.write({
  dir: next,
  format: 'cjs',
  entryFileNames: '[name].cjs',
  // A command's chunk is named after its folder (`list-…`), not after the `command.ts` every command has.
  chunkFileNames: ({ name, facadeModuleId }) =>
    `${name === 'command' && facadeModuleId ? basename(dirname(facadeModuleId)) : '[name]'}-[hash].cjs`,
  generatedCode: 'es2015',
});
await bundle.close();

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
// The single executables (scripts/build-exe.mjs) are built apart and outlive a rebuild of the package.
await rename(`${old}/exe`, 'dist/exe').catch((err) => {
  if (err.code !== 'ENOENT') throw err;
});
await rm(old, { recursive: true, force: true });

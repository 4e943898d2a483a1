// Builds dist/: the CLI as CommonJS chunks (Rollup, with esbuild stripping the types) and the bundled dependencies
// (undici, open) as one ES module each (esbuild). CommonJS because Node loads it synchronously: an ES module entry
// goes through the asynchronous ES module loader (fs/promises reads, module jobs, linking), which cost a cached
// `idcli token` ~4.5 ms of its ~5 ms over a bare `node` (measured: 29.2 vs 24.6 ms). The source stays ESM.
// Rollup rather than esbuild's own splitter: Rollup keeps every module the entry already loads inside the entry
// chunk, so `idcli token` reads one or two files instead of a dozen small shared chunks, and each further command
// loads one chunk of its own. The new build is written beside dist/ and swapped in with renames, so a process
// started from dist/ during a rebuild never finds it half-deleted.
import { existsSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { builtinModules, createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { build, transform } from 'esbuild';
import { rollup } from 'rollup';

const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
const next = resolve(`dist.next-${process.pid}`);
const old = `dist.old-${process.pid}`;
const TARGET = 'node20.18';
/** Dependencies bundled into dist/vendor; the native keyring binding stays an installed dependency. */
const VENDORED = ['undici', 'open'];

/**
 * Node's builtins are reached through process.getBuiltinModule (Node >= 20.16) instead of `import … from
 * 'node:fs'`. In the vendored ES modules, an import of a builtin builds a facade of all its exports, and for
 * node:fs that runs lazy getters that load the whole streams stack (~2 ms of a start-up for a few such imports).
 * In the CLI's chunks, where an import would become a require() as the chunk loads, the shim defers loading a
 * builtin (node:net, node:http, node:crypto) to the first call that needs it.
 */
const bare = new Set(builtinModules);
const builtinId = (id) => (id.startsWith('node:') ? id : bare.has(id) ? `node:${id}` : undefined);
const missing = (id) => `throw Object.assign(new Error("Cannot find module '${id}'"), { code: 'MODULE_NOT_FOUND' })`;

const esbuildBuiltins = {
  name: 'builtin-shims',
  setup(b) {
    b.onResolve({ filter: /^[a-z0-9_/:]+$/ }, (a) => {
      const id = builtinId(a.path);
      return id ? { path: id, namespace: 'builtin' } : undefined;
    });
    // A builtin this Node lacks (node:sqlite on Node 20) throws as require() would: undici probes for it.
    b.onLoad({ filter: /.*/, namespace: 'builtin' }, (a) => ({
      contents: `module.exports = process.getBuiltinModule(${JSON.stringify(a.path)}) ?? (() => { ${missing(a.path)} })();`,
      loader: 'js',
    }));
  },
};

await build({
  entryPoints: Object.fromEntries(VENDORED.map((name) => [name, name])),
  outdir: `${next}/vendor`,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: TARGET,
  plugins: [esbuildBuiltins],
  legalComments: 'none',
  logLevel: 'warning',
});

const rollupSource = {
  name: 'idcli-source',
  resolveId(source, importer) {
    // One shim per importing module: a shim shared by modules of two chunks would become a chunk file of its own,
    // one more file to load (~0.5 ms for the keychain's node:net and node:crypto); duplicates cost a few bytes.
    const id = builtinId(source);
    if (id) return `\0builtin:${id}?${importer}`;
    if (VENDORED.includes(source)) return { id: `vendor:${source}`, external: true };
    if (source === '@napi-rs/keyring') return { id: source, external: true };
    if (importer && source.startsWith('.') && source.endsWith('.js')) {
      const ts = resolve(dirname(importer), source.replace(/\.js$/, '.ts'));
      if (existsSync(ts)) return ts;
    }
    return null;
  },
  // import('node:http') becomes a call of process.getBuiltinModule: otherwise even its shim would be a chunk file
  // of its own, one more file to load (~1 ms on the first page a walk fetches, measured with the ES module build).
  resolveDynamicImport(specifier) {
    const id = typeof specifier === 'string' ? builtinId(specifier) : undefined;
    return id ? { id, external: true } : null;
  },
  // import.meta.url of a chunk: Rollup's own stand-in for CommonJS also probes for a browser's document.
  resolveImportMeta(property) {
    return property === 'url' ? 'require("node:url").pathToFileURL(__filename).href' : null;
  },
  renderDynamicImport({ targetModuleId }) {
    return targetModuleId && builtinId(targetModuleId)
      ? { left: 'Promise.resolve(process.getBuiltinModule(', right: '))' }
      : null;
  },
  load(id) {
    if (!id.startsWith('\0builtin:')) return null;
    const name = id.slice('\0builtin:'.length, id.indexOf('?'));
    const mod = process.getBuiltinModule(name) ?? {};
    const members = Object.keys(mod).filter((k) => /^[A-Za-z_$][\w$]*$/.test(k) && k !== 'default');
    // The builtin loads on first use. A plain function (lower-case name, by Node's convention) is a wrapper that
    // calls through, so importing node:fs/promises or node:os costs nothing until a call; constructors and values
    // are read when the chunk runs. Each is its own pure declaration: the ones nobody imports are dropped.
    const member = (k) =>
      typeof Object.getOwnPropertyDescriptor(mod, k)?.value === 'function' && /^[a-z]/.test(k)
        ? `export function ${k}(...args) { return load().${k}(...args); }`
        : `export const ${k} = /* @__PURE__ */ (() => load().${k})();`;
    return [
      'let m;',
      `const load = () => (m ??= process.getBuiltinModule(${JSON.stringify(name)}) ?? (() => { ${missing(name)} })());`,
      'export default /* @__PURE__ */ (() => load())();',
      ...members.map(member),
    ].join('\n');
  },
  async transform(code, id) {
    if (!id.endsWith('.ts')) return null;
    const out = await transform(code, {
      loader: 'ts',
      format: 'esm',
      target: TARGET,
      define: { IDCLI_VERSION: JSON.stringify(pkg.version) },
      sourcefile: id,
    });
    return { code: out.code, map: null };
  },
  // Whitespace and syntax only: start-up compiles every byte of a chunk, and names stay readable in the output.
  async renderChunk(code) {
    const out = await transform(code, { target: TARGET, minifyWhitespace: true, minifySyntax: true });
    return { code: out.code, map: null };
  },
};

const bundle = await rollup({
  input: { cli: 'src/cli.ts' },
  plugins: [rollupSource],
  // Command chunks may import what cli.cjs already holds, instead of a facade entry plus a shared chunk.
  preserveEntrySignatures: 'allow-extension',
});
await bundle.write({
  dir: next,
  format: 'cjs',
  entryFileNames: '[name].cjs',
  chunkFileNames: '[name]-[hash].cjs',
  // The vendored ES modules are reached with import(), which CommonJS has too.
  dynamicImportInCjs: true,
  paths: (id) => (id.startsWith('vendor:') ? `./vendor/${id.slice('vendor:'.length)}.js` : id),
});
await bundle.close();

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

// Builds the single executables (README, "Installing"): dist/exe/idcli-linux-<arch>, each the newest LTS Node from
// the registry's prebuilt runtime packages with the whole CLI in one bundle and the keychain addon as an asset
// (src/exe/keyring.ts), plus a SHA-256 file beside it. The machine's own Node only runs this script: an executable
// carries the runtime it was built from, so that runtime is chosen here, not by whoever builds.
// One bundle rather than the npm package's chunks: the executable reads no files, and its code cache (SEA
// `useCodeCache`) is what spares it compiling; a code cache is made by the V8 that runs it, so an executable for
// another architecture is built without one. IDCLI_EXE_ARCH=x64,arm64 chooses the architectures (default both).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const LTS_MAJOR = 26;
const ADDON_ASSET = 'keyring.node';
const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
const keyringPkg = JSON.parse(
  await readFile(new URL('../node_modules/@napi-rs/keyring/package.json', import.meta.url), 'utf8'),
);
const host = process.arch;
const arches = (process.env.IDCLI_EXE_ARCH ?? 'x64,arm64').split(',').filter((a) => a !== '');
const out = resolve('dist', 'exe');
const work = await mkdtemp(join(tmpdir(), 'idcli-exe-'));

/** Installs registry packages into a prefix of their own; `--force` lets npm fetch another architecture's build. */
function npmInstall(prefix, specs, foreign) {
  const args = ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, ...(foreign ? ['--force'] : [])];
  execFileSync('npm', [...args, ...specs], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** The runtime and the keychain addon of one architecture, at the host runtime's exact version. */
function fetchParts(arch, version) {
  const prefix = join(work, arch);
  const addonPkg = `@napi-rs/keyring-linux-${arch}-gnu`;
  const addonVersion = keyringPkg.optionalDependencies[addonPkg];
  npmInstall(prefix, [`node-linux-${arch}@${version}`, `${addonPkg}@${addonVersion}`], arch !== host);
  return {
    node: join(prefix, 'node_modules', `node-linux-${arch}`, 'bin', 'node'),
    addon: join(prefix, 'node_modules', addonPkg, `keyring.linux-${arch}-gnu.node`),
  };
}

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

try {
  // The host's runtime builds every executable: --build-sea needs the same Node version as the one it injects into.
  npmInstall(join(work, 'builder'), [`node-linux-${host}@${LTS_MAJOR}`], false);
  const builder = join(work, 'builder', 'node_modules', `node-linux-${host}`, 'bin', 'node');
  const version = execFileSync(builder, ['--version'], { encoding: 'utf8' }).trim().slice(1);
  await mkdir(out, { recursive: true });
  for (const arch of arches) {
    const parts = fetchParts(arch, version);
    const main = join(work, `idcli-${arch}.cjs`);
    await build({
      entryPoints: ['src/exe/main.ts'],
      outfile: main,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: `node${LTS_MAJOR}`,
      minifyWhitespace: true,
      minifySyntax: true,
      legalComments: 'none',
      alias: { '@napi-rs/keyring': './src/exe/keyring.ts' },
      define: {
        IDCLI_VERSION: JSON.stringify(`${pkg.version} (single executable, Node v${version}, linux-${arch})`),
        IDCLI_KEYRING_ASSET: JSON.stringify(ADDON_ASSET),
        IDCLI_KEYRING_SHA256: JSON.stringify(sha256(await readFile(parts.addon))),
      },
      // `open` finds its own xdg-open beside import.meta.url; bundled, there is none, and it runs the system's.
      logOverride: { 'empty-import-meta': 'silent' },
    });
    const output = join(out, `idcli-linux-${arch}`);
    const config = join(work, `sea-${arch}.json`);
    await writeFile(
      config,
      JSON.stringify({
        main,
        output,
        executable: parts.node,
        disableExperimentalSEAWarning: true,
        useCodeCache: arch === host,
        // NODE_OPTIONS (--require, --inspect) would let the environment run other code inside idcli or open a
        // debugger on it; the executable takes no Node options from anywhere but here.
        execArgvExtension: 'none',
        assets: { [ADDON_ASSET]: parts.addon },
      }),
    );
    execFileSync(builder, ['--build-sea', config], { stdio: ['ignore', 'ignore', 'inherit'] });
    await chmod(output, 0o755);
    const digest = sha256(await readFile(output));
    await writeFile(`${output}.sha256`, `${digest}  idcli-linux-${arch}\n`);
    console.log(`${output}: Node v${version}, sha256 ${digest}`);
  }
} finally {
  await rm(work, { recursive: true, force: true });
}

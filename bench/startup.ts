/**
 * Start-up figures: whole-process wall time of `idcli --version`, `--help` and `idcli token` with a cached token
 * (file store and OS keychain), each as a median over interleaved runs next to an empty Node start (`node -e 0`)
 * measured in the same loop, plus the peak RSS of `idcli token`. kubectl and git run idcli on every operation, so
 * `credential kubectl` and `credential git get` with a cached token (file store) are held to the budget of `token`. The peer is `gh auth token` reading a hosts.yml
 * written here (a config dir of its own, so the user's is never read): the file-store figure must not be slower.
 * Beside the keychain figure, the keychain library alone: `node -e` loading @napi-rs/keyring and reading one
 * secret of a record's size, which is what any keychain read through the library costs before idcli's own work.
 * BENCH_BASELINE=<checkout> adds that build's cached `idcli token` (file store) to the same loop.
 * Where the single executable is built (npm run build:exe), its cached `idcli token` joins the loop too, judged
 * against `node -e 0` of the very runtime it carries (the registry's package of that version, fetched here), and its
 * size compressed with xz is printed.
 * Prints figures; asserts nothing.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../test/emulator/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'idcli.cjs');
const runs = Number(process.env.BENCH_STARTUP_RUNS ?? 40);
const exe = join(root, 'dist', 'exe', `idcli-linux-${process.arch}`);

interface Case {
  name: string;
  /** The program to run; Node itself unless given. */
  command?: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  budget?: number;
  /** The case whose median the ratio is taken against; the first (`node -e 0`) unless given. */
  floor?: string;
  /** Written to its stdin (git's attributes); none unless given. */
  input?: string;
}

function once(c: Case): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(c.command ?? process.execPath, c.args, {
    env: c.env,
    stdio: [c.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    ...(c.input === undefined ? {} : { input: c.input }),
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${c.name} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/** Debian's gh, or undefined when it is not installed. */
function findGh(): string | undefined {
  const r = spawnSync('gh', ['--version'], { stdio: 'ignore' });
  return r.status === 0 ? 'gh' : undefined;
}

/** Sign-ins need the in-process emulator to answer, so they must not block the event loop like spawnSync. */
function login(env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bin, 'login', '--timeout', '30'], { env }, (err, _stdout, stderr) =>
      err ? reject(new Error(`login failed: ${stderr.trim().split('\n').pop()}`)) : resolve(),
    );
  });
}

/**
 * A `node -e` script that stores, reads or deletes one 800-byte secret (about the size of a record) through @napi-rs/keyring, pinned to the Secret
 * Service on Linux as idcli's entries are: reading it is the library's own cost of a cached keychain read.
 */
function keyringScript(op: 'set' | 'get' | 'delete'): string {
  const lib = JSON.stringify(createRequire(import.meta.url).resolve('@napi-rs/keyring'));
  const entry = `new (require(${lib}).AsyncEntry)('idcli-bench-library-${process.pid}', 'floor', { linux: { store: 'secret-service' } })`;
  if (op === 'set') return `${entry}.setSecret(Buffer.alloc(800, 120))`;
  if (op === 'delete') return `${entry}.deleteCredential()`;
  return `${entry}.getSecret().then((s) => { if (!s || s.length !== 800) process.exit(1); })`;
}

/** The registry's Node of the version the executable carries, installed under `tmp`; undefined without one. */
function exeRuntime(tmp: string): string | undefined {
  if (!existsSync(exe)) return undefined;
  const version = /Node v(\d+\.\d+\.\d+)/.exec(execFileSync(exe, ['--version'], { encoding: 'utf8' }))?.[1];
  if (version === undefined) return undefined;
  const pkg = `node-linux-${process.arch}`;
  const prefix = join(tmp, 'exe-runtime');
  execFileSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, `${pkg}@${version}`], {
    stdio: 'ignore',
  });
  return join(prefix, 'node_modules', pkg, 'bin', 'node');
}

/** The executable's size, and compressed with xz as a download would be. */
function exeSize(): string {
  const xz = spawnSync('xz', ['-6', '-T0', '-c', exe], { maxBuffer: 1 << 30 });
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  const packed = xz.status === 0 ? `, ${mb(xz.stdout.length)} with xz -6` : ' (no xz here to compress it)';
  return `single executable ${exe}: ${mb(statSync(exe).size)}${packed}`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function peakRssMb(args: string[], env: NodeJS.ProcessEnv): number | undefined {
  if (!existsSync('/usr/bin/time')) return undefined;
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, ...args], { env, encoding: 'utf8' });
    const kb = Number(r.stderr.trim().split('\n').pop());
    if (Number.isFinite(kb)) samples.push(kb / 1024);
  }
  return samples.length ? median(samples) : undefined;
}

export async function benchStartup(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), 'idcli-bench-'));
  const emulator = await startEmulator({ loopbackAnyPort: true, callbackUrl: 'http://127.0.0.1:8765/callback' });
  try {
    const base: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS,
      XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR,
      IDCLI_BASE_URL: emulator.baseUrl,
      IDCLI_CLIENT_ID: emulator.client.id,
      IDCLI_CLIENT_NAME: emulator.client.name,
      IDCLI_REDIRECT_URI: 'http://127.0.0.1:0/callback',
      BROWSER: join(root, 'test', 'support', 'http-browser.mjs'),
    };
    const fileEnv = { ...base, IDCLI_CONFIG_DIR: join(tmp, 'file'), IDCLI_CREDENTIAL_STORE: 'file' };
    const keyEnv = {
      ...base,
      IDCLI_CONFIG_DIR: join(tmp, 'keychain'),
      IDCLI_CREDENTIAL_STORE: 'keychain',
      IDCLI_KEYCHAIN_SERVICE: `idcli-bench-${process.pid}`,
    };
    await login(fileEnv);
    const cases: Case[] = [
      { name: 'node -e 0 (floor)', args: ['-e', '0'], env: base },
      { name: 'idcli --version', args: [bin, '--version'], env: base, budget: 1.15 },
      { name: 'idcli --help', args: [bin, '--help'], env: base, budget: 1.15 },
      { name: 'idcli token (file store)', args: [bin, 'token'], env: fileEnv, budget: 1.3 },
    ];
    // git and kubectl start these on every call: the same budget as `token`, for the package and the executable.
    const gitInput = `protocol=http\nhost=${new URL(emulator.baseUrl).host}\n\n`;
    const credentialCases = (prefix: string, command: string | undefined, first: string[], floor?: string): Case[] =>
      [
        {
          name: `${prefix}credential kubectl (file)`,
          command,
          args: [...first, 'credential', 'kubectl'],
          env: fileEnv,
        },
        {
          name: `${prefix}credential git get (file)`,
          command,
          args: [...first, 'credential', 'git', 'get'],
          env: fileEnv,
        },
      ].map((c) => ({
        ...c,
        budget: 1.3,
        ...(c.name.includes('git') && { input: gitInput }),
        ...(floor && { floor }),
      }));
    cases.push(...credentialCases('', undefined, [bin]));
    // Another build of idcli (a checkout with its own dist/) reading the same record: is this one slower than it?
    const baseline = process.env.BENCH_BASELINE;
    if (baseline) {
      const other = join(baseline, 'bin', 'idcli.cjs');
      cases.push({ name: 'idcli token (file), baseline', args: [other, 'token'], env: fileEnv });
    }
    // The single executable, against an empty start of the Node it carries.
    const exeNode = exeRuntime(tmp);
    if (exeNode !== undefined) {
      cases.push({ name: "node -e 0, executable's Node", command: exeNode, args: ['-e', '0'], env: base });
      const floor = cases.at(-1)!.name;
      cases.push({ name: 'executable: token (file)', command: exe, args: ['token'], env: fileEnv, budget: 1.3, floor });
      cases.push(...credentialCases('executable: ', exe, [], floor));
    }
    const gh = findGh();
    if (gh) {
      const ghDir = join(tmp, 'gh');
      await mkdir(ghDir);
      await writeFile(
        join(ghDir, 'hosts.yml'),
        'github.com:\n    oauth_token: gho_bench0000000000000000000000000000000\n    user: idcli-bench\n    git_protocol: https\n',
      );
      const ghEnv = { PATH: process.env.PATH, HOME: tmp, GH_CONFIG_DIR: ghDir, GH_NO_UPDATE_NOTIFIER: '1' };
      cases.push({ name: 'gh auth token (peer)', command: gh, args: ['auth', 'token'], env: ghEnv });
    } else {
      console.log("(no gh here, the peer figure is skipped: install Debian's gh)");
    }
    let keychain = false;
    try {
      await login(keyEnv);
      cases.push({ name: 'idcli token (OS keychain)', args: [bin, 'token'], env: keyEnv, budget: 1.6 });
      keychain = true;
      cases.push({ name: 'keychain library alone (ref.)', args: ['-e', keyringScript('get')], env: keyEnv });
      if (exeNode !== undefined) {
        const floor = "node -e 0, executable's Node";
        cases.push({
          name: 'executable: token (keychain)',
          command: exe,
          args: ['token'],
          env: keyEnv,
          budget: 1.6,
          floor,
        });
      }
      once({ name: 'keychain library: store', args: ['-e', keyringScript('set')], env: keyEnv });
    } catch (err) {
      console.log(`(no OS keychain here, keychain figure skipped: ${(err as Error).message.split('\n')[0]})`);
    }
    const times = cases.map(() => [] as number[]);
    for (const c of cases) once(c); // warm the file cache
    for (let i = 0; i < runs; i++) {
      for (const [j, c] of cases.entries()) times[j]!.push(once(c));
    }
    const floor = median(times[0]!);
    console.log(`\nstart-up, median of ${runs} interleaved runs (Node ${process.version})`);
    console.log(`${'case'.padEnd(30)} ${'median'.padStart(9)} ${'ratio'.padStart(7)} ${'budget'.padStart(7)}`);
    const medians = times.map(median);
    cases.forEach((c, j) => {
      const m = medians[j]!;
      const ratio = m / (c.floor === undefined ? floor : medians[cases.findIndex((f) => f.name === c.floor)]!);
      const verdict = c.budget === undefined ? '' : ratio <= c.budget ? '  ok' : '  OVER';
      console.log(
        `${c.name.padEnd(30)} ${`${m.toFixed(1)} ms`.padStart(9)} ${`${ratio.toFixed(2)}x`.padStart(7)} ${(c.budget ? `${c.budget}x` : '').padStart(7)}${verdict}`,
      );
    });
    const fileStore = cases.findIndex((c) => c.env === fileEnv);
    const peer = cases.findIndex((c) => c.command === gh && gh !== undefined);
    if (peer >= 0) {
      const ratio = medians[fileStore]! / medians[peer]!;
      console.log(
        `idcli token (file store) / gh auth token: ${ratio.toFixed(2)}x (budget 1x)${ratio <= 1 ? '  ok' : '  OVER'}`,
      );
    }
    if (exeNode !== undefined) console.log(exeSize());
    const rss = peakRssMb([bin, 'token'], fileEnv);
    const floorRss = peakRssMb(['-e', '0'], base);
    if (rss !== undefined) {
      console.log(
        `peak RSS idcli token (file store): ${rss.toFixed(1)} MB (node -e 0: ${floorRss?.toFixed(1)} MB; budget 60 MB)${rss < 60 ? '  ok' : '  OVER'}`,
      );
    }
    if (keychain) {
      const krss = peakRssMb([bin, 'token'], keyEnv);
      if (krss !== undefined)
        console.log(`peak RSS idcli token (OS keychain): ${krss.toFixed(1)} MB${krss < 60 ? '  ok' : '  OVER'}`);
      spawnSync(process.execPath, [bin, 'logout'], { env: keyEnv });
      spawnSync(process.execPath, ['-e', keyringScript('delete')], { env: keyEnv });
    }
  } finally {
    await emulator.close();
    await rm(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchStartup();

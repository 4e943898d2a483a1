/**
 * `npm run demo`: the whole product in one go, with no server and no human. Starts the contract emulator, signs in
 * through it with the HTTP "browser" of the test suite, then prints a token and the first items of collections.
 * Credentials go to a temporary file store, so the demo never touches your keychain or config.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../test/emulator/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = join(root, 'bin', 'idcli.cjs');

const emulator = await startEmulator({ callbackUrl: 'http://127.0.0.1:0/callback', loopbackAnyPort: true });
const configDir = await mkdtemp(join(tmpdir(), 'idcli-demo-'));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  IDCLI_BASE_URL: emulator.baseUrl,
  IDCLI_CLIENT_ID: emulator.client.id,
  IDCLI_CLIENT_NAME: emulator.client.name,
  // Port 0: idcli picks a free port and sends the one it bound (the demo client accepts any loopback port).
  IDCLI_REDIRECT_URI: emulator.client.callbackUrl,
  IDCLI_CONFIG_DIR: configDir,
  IDCLI_CREDENTIAL_STORE: 'file',
  BROWSER: join(root, 'test', 'support', 'http-browser.mjs'),
  HTTP_BROWSER_EMAIL: emulator.user.email,
  HTTP_BROWSER_PASSWORD: emulator.user.password,
};
delete env.IDCLI_ACCESS_TOKEN;
delete env.IDCLI_PROFILE;

function idcli(args: string[]): Promise<number> {
  process.stderr.write(`\n$ idcli ${args.join(' ')}\n`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('close', (code) => resolve(code ?? 1));
  });
}

let failures = 0;
try {
  process.stderr.write(
    `emulator: ${emulator.baseUrl} (client ${emulator.client.name} ${emulator.client.id}, user ${emulator.user.email})\n`,
  );
  for (const args of [
    ['login', '--timeout', '30'],
    ['status'],
    ['token'],
    ['token', '--refresh', '--json'],
    ['list', '/v1/users', '--limit', '3'],
    ['list', '/v1/events', '--page-size', '2', '--limit', '3'],
    ['list', '/v1/users', '--count'],
  ]) {
    const code = await idcli(args);
    process.stderr.write(`(exit ${code})\n`);
    if (code !== 0) failures++;
  }
} finally {
  await emulator.close();
  await rm(configDir, { recursive: true, force: true });
}
process.stderr.write(failures === 0 ? '\ndemo: every step succeeded\n' : `\ndemo: ${failures} step(s) failed\n`);
process.exitCode = failures === 0 ? 0 : 1;

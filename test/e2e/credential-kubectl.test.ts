// Needs a process: kubectl runs idcli as its exec plugin, a command of its own, for each request.
/**
 * The real kubectl with the built CLI as its exec plugin, against a loopback HTTPS API server that checks the bearer.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachStore, harness, type Harness } from '../support/harness.js';
import { cliArgv, seedSignIn, startKubeApi } from '../support/credential.js';

const V1 = 'client.authentication.k8s.io/v1';
const V1BETA1 = 'client.authentication.k8s.io/v1beta1';

describeEachStore('kubectl with idcli as its exec plugin', (store) => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness({ store });
  });
  afterEach(async () => {
    await h?.close();
  });

  it.each([V1, V1BETA1])('kubectl get --raw reaches an API server that checks the ID token (%s)', async (version) => {
    const t = await seedSignIn(h);
    const api = await startKubeApi(h);
    try {
      const [command, ...args] = cliArgv();
      const kubeconfig = join(h.dir, 'kubeconfig');
      await writeFile(
        kubeconfig,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [
            {
              name: 'loopback',
              cluster: { server: api.url, 'certificate-authority': api.caFile },
            },
          ],
          users: [
            {
              name: 'idcli',
              user: {
                exec: {
                  apiVersion: version,
                  command,
                  args: [...args, 'credential', 'kubectl'],
                  interactiveMode: 'Never',
                },
              },
            },
          ],
          contexts: [{ name: 'loopback', context: { cluster: 'loopback', user: 'idcli' } }],
          'current-context': 'loopback',
        }),
      );
      const r = await kubectl(['--kubeconfig', kubeconfig, 'get', '--raw', '/api'], h.env({ HOME: h.dir }));
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ kind: 'APIVersions', versions: ['v1'] });
      expect(api.seen).toContain(`Bearer ${t.id_token}`);
    } finally {
      await api.close();
    }
  });

  it('kubectl shows the plugin line when no one is signed in', async () => {
    const kubeconfig = join(h.dir, 'kubeconfig');
    const [command, ...args] = cliArgv();
    await writeFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:9' } }],
        users: [
          {
            name: 'u',
            user: {
              exec: { apiVersion: V1, command, args: [...args, 'credential', 'kubectl'], interactiveMode: 'Never' },
            },
          },
        ],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'c',
      }),
    );
    const r = await kubectl(['--kubeconfig', kubeconfig, 'get', '--raw', '/api'], h.env({ HOME: h.dir }));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('error: not logged in; run `idcli login`');
  });
});

function kubectl(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv;
  return new Promise((resolve) => {
    execFile('kubectl', args, { env: clean, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * `idcli credential kubectl`: the ExecCredential of the version kubectl asks for, refreshed under --min-ttl, never a
 * prompt; and the real kubectl using it against a loopback HTTPS API server that checks the bearer.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachStore, expectNoSecrets, harness, type Harness } from '../auth/harness.js';
import { expectOneErrorLine } from '../support/cli.js';
import { cliArgv, refreshes, seedSignIn, startKubeApi } from './support.js';

const V1 = 'client.authentication.k8s.io/v1';
const V1BETA1 = 'client.authentication.k8s.io/v1beta1';
/** KUBERNETES_EXEC_INFO as kubectl sets it for a plugin without cluster info. */
const execInfo = (apiVersion: string) =>
  JSON.stringify({ kind: 'ExecCredential', apiVersion, spec: { interactive: false } });

/** The `exp` of a JWT, as RFC 3339 in whole seconds. */
const expOf = (jwt: string): string => {
  const { exp } = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as { exp: number };
  return new Date(exp * 1000).toISOString().replace('.000Z', 'Z');
};

describeEachStore('credential kubectl', (store) => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness({ store });
  });
  afterEach(async () => {
    await h?.close();
  });

  it.each([V1, V1BETA1])('prints the ID token as an ExecCredential of %s, with its expiry', async (version) => {
    const t = await seedSignIn(h);
    const r = await h.run(['credential', 'kubectl'], { KUBERNETES_EXEC_INFO: execInfo(version) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({
      kind: 'ExecCredential',
      apiVersion: version,
      status: { token: t.id_token, expirationTimestamp: expOf(t.id_token) },
    });
    expect(refreshes(h.emu)).toBe(0);
  });

  it('prints the access token with --token-type access, v1 when KUBERNETES_EXEC_INFO is unset', async () => {
    const t = await seedSignIn(h);
    const r = await h.run(['credential', 'kubectl', '--token-type', 'access']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { apiVersion: string; status: { token: string; expirationTimestamp: string } };
    expect(out.apiVersion).toBe(V1);
    expect(out.status.token).toBe(t.access_token);
    const expiresAt = (await h.record())!.expiresAt!;
    expect(out.status.expirationTimestamp).toBe(
      new Date(Math.floor(expiresAt / 1000) * 1000).toISOString().replace('.000Z', 'Z'),
    );
  });

  it('refreshes first when the token has less than --min-ttl left', async () => {
    const t = await seedSignIn(h, 30);
    const r = await h.run(['credential', 'kubectl']);
    expect(r.code, r.stderr).toBe(0);
    expect(refreshes(h.emu)).toBe(1);
    const token = (JSON.parse(r.stdout) as { status: { token: string } }).status.token;
    const record = (await h.record())!;
    expect(record.accessToken).not.toBe(t.access_token);
    expect(token).toBe(record.idToken);
    const again = await h.run(['credential', 'kubectl', '--min-ttl', '10']);
    expect(again.code).toBe(0);
    expect(refreshes(h.emu)).toBe(1);
    expectNoSecrets(h, [t.id_token, token]);
  });

  it('refreshes when the ID token expires within --min-ttl, even with a long-lived access token', async () => {
    await seedSignIn(h);
    const record = (await h.record())!;
    const soon = Math.floor(Date.now() / 1000) + 30;
    const claims = Buffer.from(JSON.stringify({ sub: 'x', exp: soon })).toString('base64url');
    await h.writeRecord({ ...record, idToken: `eyJhbGciOiJub25lIn0.${claims}.sig` });
    const r = await h.run(['credential', 'kubectl']);
    expect(r.code, r.stderr).toBe(0);
    expect(refreshes(h.emu)).toBe(1);
    const token = (JSON.parse(r.stdout) as { status: { token: string } }).status.token;
    expect(h.emu.verifyIdToken(token)).not.toBeNull();
  });

  it('without a sign-in: one line on stderr, exit 3, no browser', async () => {
    const r = await h.run(['credential', 'kubectl'], { KUBERNETES_EXEC_INFO: execInfo(V1) });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expectOneErrorLine(r, /not logged in; run `idcli login`/);
    expect(h.emu.requests.filter((q) => q.path.startsWith('/oauth/'))).toEqual([]);
  });

  it('a refused refresh is exit 3 too, with nothing on stdout', async () => {
    await seedSignIn(h, -1);
    h.emu.revokeAll();
    const r = await h.run(['credential', 'kubectl']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expectOneErrorLine(r, /rejected by the server/);
  });
});

it('with IDCLI_ACCESS_TOKEN: access prints it with its JWT expiry, id is exit 3', async () => {
  const h = await harness();
  try {
    const exp = Math.floor(Date.now() / 1000) + 900;
    const jwt = `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify({ exp })).toString('base64url')}.sig`;
    const access = await h.run(['credential', 'kubectl', '--token-type', 'access'], { IDCLI_ACCESS_TOKEN: jwt });
    expect(access.code, access.stderr).toBe(0);
    expect(JSON.parse(access.stdout)).toMatchObject({
      status: { token: jwt, expirationTimestamp: new Date(exp * 1000).toISOString().replace('.000Z', 'Z') },
    });
    const short = await h.run(['credential', 'kubectl', '--token-type', 'access', '--min-ttl', '1800'], {
      IDCLI_ACCESS_TOKEN: jwt,
    });
    expect(short.code).toBe(3);
    expect(short.stdout).toBe('');
    const id = await h.run(['credential', 'kubectl'], { IDCLI_ACCESS_TOKEN: jwt });
    expect(id.code).toBe(3);
    expectOneErrorLine(id, /no ID token to give kubectl: IDCLI_ACCESS_TOKEN holds an access token only/);
  } finally {
    await h.close();
  }
});

it('refuses an API version it cannot write, naming the fix', async () => {
  const h = await harness();
  try {
    const r = await h.run(['credential', 'kubectl'], {
      KUBERNETES_EXEC_INFO: execInfo('client.authentication.k8s.io/v2'),
    });
    expect(r.code).toBe(2);
    expectOneErrorLine(r, /KUBERNETES_EXEC_INFO names client\.authentication\.k8s\.io\/v2.*v1 or .*v1beta1/);
  } finally {
    await h.close();
  }
});

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

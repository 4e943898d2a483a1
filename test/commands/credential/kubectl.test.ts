/**
 * `idcli credential kubectl`: the ExecCredential of the version kubectl asks for, refreshed under --min-ttl, never a
 * prompt; each command run in process. The real kubectl using it is in test/e2e/credential-kubectl.test.ts.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachStore, expectNoSecrets, harness, type Harness } from '../../support/harness.js';
import { expectOneErrorLine } from '../../support/cli.js';
import { refreshes, seedSignIn } from '../../support/credential.js';

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
    h = await harness({ store, recordItems: 0 });
  });
  afterEach(async () => {
    await h?.close();
  });

  it.each([V1, V1BETA1])('prints the ID token as an ExecCredential of %s, with its expiry', async (version) => {
    const t = await seedSignIn(h);
    const r = await h.command(['credential', 'kubectl'], { KUBERNETES_EXEC_INFO: execInfo(version) });
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
    const r = await h.command(['credential', 'kubectl', '--token-type', 'access']);
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
    const r = await h.command(['credential', 'kubectl']);
    expect(r.code, r.stderr).toBe(0);
    expect(refreshes(h.emu)).toBe(1);
    const token = (JSON.parse(r.stdout) as { status: { token: string } }).status.token;
    const record = (await h.record())!;
    expect(record.accessToken).not.toBe(t.access_token);
    expect(token).toBe(record.idToken);
    const again = await h.command(['credential', 'kubectl', '--min-ttl', '10']);
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
    const r = await h.command(['credential', 'kubectl']);
    expect(r.code, r.stderr).toBe(0);
    expect(refreshes(h.emu)).toBe(1);
    const token = (JSON.parse(r.stdout) as { status: { token: string } }).status.token;
    expect(h.emu.verifyIdToken(token)).not.toBeNull();
  });

  it('without a sign-in: one line on stderr, exit 3, no browser', async () => {
    const r = await h.command(['credential', 'kubectl'], { KUBERNETES_EXEC_INFO: execInfo(V1) });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expectOneErrorLine(r, /not logged in; run `idcli login`/);
    expect(h.emu.requests.filter((q) => q.path.startsWith('/oauth/'))).toEqual([]);
  });

  it('a refused refresh is exit 3 too, with nothing on stdout', async () => {
    await seedSignIn(h, -1);
    h.emu.revokeAll();
    const r = await h.command(['credential', 'kubectl']);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expectOneErrorLine(r, /rejected by the server/);
  });
});

it('with IDCLI_ACCESS_TOKEN: access prints it with its JWT expiry, id is exit 3', async () => {
  const h = await harness({ recordItems: 0 });
  try {
    const exp = Math.floor(Date.now() / 1000) + 900;
    const jwt = `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify({ exp })).toString('base64url')}.sig`;
    const access = await h.command(['credential', 'kubectl', '--token-type', 'access'], { IDCLI_ACCESS_TOKEN: jwt });
    expect(access.code, access.stderr).toBe(0);
    expect(JSON.parse(access.stdout)).toMatchObject({
      status: { token: jwt, expirationTimestamp: new Date(exp * 1000).toISOString().replace('.000Z', 'Z') },
    });
    const short = await h.command(['credential', 'kubectl', '--token-type', 'access', '--min-ttl', '1800'], {
      IDCLI_ACCESS_TOKEN: jwt,
    });
    expect(short.code).toBe(3);
    expect(short.stdout).toBe('');
    const id = await h.command(['credential', 'kubectl'], { IDCLI_ACCESS_TOKEN: jwt });
    expect(id.code).toBe(3);
    expectOneErrorLine(id, /no ID token to give kubectl: IDCLI_ACCESS_TOKEN holds an access token only/);
  } finally {
    await h.close();
  }
});

it('refuses an API version it cannot write, naming the fix', async () => {
  const h = await harness({ recordItems: 0 });
  try {
    const r = await h.command(['credential', 'kubectl'], {
      KUBERNETES_EXEC_INFO: execInfo('client.authentication.k8s.io/v2'),
    });
    expect(r.code).toBe(2);
    expectOneErrorLine(r, /KUBERNETES_EXEC_INFO names client\.authentication\.k8s\.io\/v2.*v1 or .*v1beta1/);
  } finally {
    await h.close();
  }
});

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ExitCode, IdcliError } from '../../src/errors.js';
import { b64, EtcdClient, kvsOf } from '../../src/store/etcd-client.js';
import { makePki } from '../emulator/pki.js';
import { tempDir } from '../support/cli.js';
import { FakeClock } from '../support/clock.js';
import { until } from '../support/until.js';

describe("kvsOf: the gateway's key-values read as text", () => {
  it('decodes keys and values, and takes a 64-bit lease sent as a string or a small one sent as a number', () => {
    const range = {
      kvs: [
        { key: b64('idcli/a'), value: b64('{"v":1}'), mod_revision: '7', lease: '7587883452' },
        { key: b64('idcli/b'), value: b64(''), mod_revision: 8, lease: 42 },
      ],
    };
    expect(kvsOf(range)).toEqual([
      { key: 'idcli/a', value: '{"v":1}', modRevision: 7, lease: '7587883452' },
      { key: 'idcli/b', value: '', modRevision: 8, lease: '42' },
    ]);
  });

  it('reads a field that is neither a string nor a number as absent, never as "[object Object]"', () => {
    const range = { kvs: [{ key: { nested: true }, value: [b64('x')], mod_revision: '3', lease: { id: 1 } }] };
    expect(kvsOf(range)).toEqual([{ key: '', value: '', modRevision: 3, lease: '0' }]);
  });
});

interface FakeMember {
  url: string;
  asked: () => number;
  close: () => Promise<void>;
}

/** A member on loopback that counts the requests it is asked and answers each with `answer`. */
async function fakeMember(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<FakeMember> {
  let asked = 0;
  const server: Server = createServer((req, res) => {
    asked++;
    req.resume();
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    asked: () => asked,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A member that has lost its leader: every request is answered at once as etcd's gateway answers it then. */
const leaderlessMember = (): Promise<FakeMember> =>
  fakeMember((req, res) =>
    req.on('end', () => {
      const error = 'etcdserver: no leader';
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error, message: error, code: 14 }));
    }),
  );

/** A member that takes every request and never answers, as one cut off from the others may. */
const hungMember = (): Promise<FakeMember> => fakeMember(() => {});

/** A member speaking TLS with a certificate of a throwaway CA the client was not told of: refused at the handshake. */
async function untrustedMember(): Promise<FakeMember> {
  const dir = await tempDir('idcli-etcd-tls-');
  const pki = makePki(dir.path);
  let asked = 0;
  const server = createTlsServer({ key: pki.key, cert: pki.cert }, (_req, res) => {
    asked++;
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    asked: () => asked,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await dir.cleanup();
    },
  };
}

/** Members made by `makers`, in order, and a client of theirs on a FakeClock, for `body`; closed after it. */
async function withFleet(
  makers: Array<() => Promise<FakeMember>>,
  body: (fleet: { members: FakeMember[]; clock: FakeClock; client: EtcdClient }) => Promise<void>,
): Promise<void> {
  const members: FakeMember[] = [];
  for (const make of makers) members.push(await make());
  const clock = new FakeClock();
  const client = new EtcdClient({ endpoints: members.map((m) => m.url), clock });
  try {
    await body({ members, clock, client });
  } finally {
    client.close();
    await Promise.all(members.map((m) => m.close()));
  }
}

describe("call()'s patience, on the client's clock", () => {
  it('asks every member again after ever longer pauses, then exits 4 naming them, within its 8 s', async () => {
    await withFleet([leaderlessMember, leaderlessMember, leaderlessMember], async ({ members, clock, client }) => {
      const started = clock.now();
      let ended = false;
      const call = client.call('/v3/kv/range', { key: b64('idcli/a') }).finally(() => (ended = true));
      call.catch(() => {});
      // Only the pauses between passes are let end: a member's deadline (5 s) never has to.
      const pauses: number[] = [];
      for (;;) {
        const pause = await until(
          () => (ended ? 0 : clock.pending().find((ms) => ms < 5_000)),
          10_000,
          'a pause between passes or the end',
        );
        if (pause === 0) break;
        pauses.push(await clock.elapseFirst((ms) => ms < 5_000));
      }
      const err = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(IdcliError);
      expect(err).toMatchObject({ code: 'ETCD_UNAVAILABLE', exitCode: ExitCode.NETWORK });
      for (const m of members) expect((err as IdcliError).message).toContain(`${m.url} (etcdserver: no leader)`);
      // A pause longer each pass; the one that would end past the patience (at 9 s) is not taken.
      expect(pauses).toEqual([250, 500, 750, 1000, 1250, 1500, 1750]);
      expect(clock.now() - started).toBe(7_000);
      expect(members.map((m) => m.asked())).toEqual([8, 8, 8]);
      expect(clock.pending()).toEqual([]);
    });
  });

  it('takes members that never answer for members without a quorum, not for a TLS set-up to mend', async () => {
    await withFleet([hungMember, hungMember, hungMember], async ({ members, clock, client }) => {
      const started = clock.now();
      const call = client.call('/v3/kv/range', { key: b64('idcli/a') });
      call.catch(() => {});
      // A member's deadline is let pass only once the member has the request: on a loaded machine the request can
      // still be on its way over loopback when the deadline is set, and the member would never see it.
      for (const m of members) {
        await until(() => (m.asked() > 0 ? true : undefined), 20_000, `the request at ${m.url}`);
        await clock.elapseFirst((ms) => ms === 5_000, `the deadline of ${m.url}`);
      }
      const err = await clock.runUntilSettled(call, 'the call').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(IdcliError);
      expect(err).toMatchObject({ code: 'ETCD_UNAVAILABLE', exitCode: ExitCode.NETWORK });
      for (const m of members)
        expect((err as IdcliError).message).toContain(`${m.url} (no complete response within 5 s)`);
      // Each member's deadline ended its attempt in turn; that pass outlasted the patience, so none was asked again.
      expect(members.map((m) => m.asked())).toEqual([1, 1, 1]);
      expect(clock.now() - started).toBe(15_000);
    });
  });

  it('tells a certificate refused as such, after one pass, when the other member never answers', async () => {
    await withFleet([untrustedMember, hungMember], async ({ members, clock, client }) => {
      const started = clock.now();
      const call = client.call('/v3/kv/range', { key: b64('idcli/a') });
      call.catch(() => {});
      // The handshake's refusal comes in real time: no deadline is let end before the hung member is asked.
      await until(() => members[1]!.asked() === 1 || undefined, 10_000, 'the hung member asked');
      const err = await clock.runUntilSettled(call, 'the call').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(IdcliError);
      expect(err).toMatchObject({ code: 'ETCD_TLS_FAILED', exitCode: ExitCode.NETWORK });
      expect((err as IdcliError).hint).toContain('IDCLI_ETCD_CACERT');
      expect((err as IdcliError).message).toContain(`${members[1]!.url}: no complete response within 5 s`);
      // Waiting cannot mend the refused certificate: the hung member's deadline is the whole wait, as before.
      expect(members[1]!.asked()).toBe(1);
      expect(clock.now() - started).toBe(5_000);
    });
  });

  it('with a member that never answers beside ones without a leader, ends within its patience and one deadline', async () => {
    await withFleet([leaderlessMember, hungMember, leaderlessMember], async ({ members, clock, client }) => {
      const started = clock.now();
      let ended = false;
      const call = client.call('/v3/kv/range', { key: b64('idcli/a') }).finally(() => (ended = true));
      call.catch(() => {});
      // Only the hung member's deadline and the pauses are let end; the others answer in real time.
      for (let pass = 1; !ended; pass++) {
        await until(() => (members[1]!.asked() === pass || ended ? true : undefined), 10_000, `pass ${pass}`);
        if (ended) break;
        await clock.elapse(5_000, "the hung member's deadline");
        await until(() => (ended ? 0 : clock.pending().find((ms) => ms < 5_000)), 10_000, 'a pause or the end');
        if (!ended) await clock.elapseFirst((ms) => ms < 5_000);
      }
      const err = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'ETCD_UNAVAILABLE', exitCode: ExitCode.NETWORK });
      expect((err as IdcliError).message).toContain(`${members[0]!.url} (etcdserver: no leader)`);
      expect((err as IdcliError).message).toContain(`${members[1]!.url} (no complete response within 5 s)`);
      expect(clock.now() - started).toBeLessThanOrEqual(8_000 + 5_000);
      expect(members.map((m) => m.asked())).toEqual([2, 2, 2]);
    });
  });
});

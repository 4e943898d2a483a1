/**
 * Store selection when the keychain is missing or hangs. The keychain is reached in-process after a D-Bus probe, so
 * pointing that process's DBUS_SESSION_BUS_ADDRESS somewhere else simulates a machine without a Secret Service.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { allStores, openStore } from '../../src/store/select.js';
import { KEY, sampleRecord } from '../support/store.js';
import { tempDir } from '../support/cli.js';
import { rejection } from '../support/rejection.js';
import { FakeClock } from '../support/clock.js';
import { until } from '../support/until.js';

describe('openStore: file mode', () => {
  it('uses the file store without asking the keychain', async () => {
    const dir = await tempDir();
    try {
      const warnings: string[] = [];
      const env = { ...process.env, DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir.path, 'absent.sock')}` };
      const store = await openStore({
        mode: 'file',
        configDir: dir.path,
        service: 'idcli-test',
        warn: (m) => warnings.push(m),
        env,
      });
      expect(store.kind).toBe('file');
      expect(store.notice).toBeUndefined();
      await store.write(KEY, sampleRecord(), { signIn: true });
      expect(warnings).toEqual([]);
    } finally {
      await dir.cleanup();
    }
  });
});

describe.runIf(process.platform === 'linux')('openStore without a usable Secret Service', () => {
  let dir: { path: string; cleanup: () => Promise<void> };
  let warnings: string[];
  const service = `idcli-test-${process.pid}`;

  beforeEach(async () => {
    dir = await tempDir();
    warnings = [];
  });
  afterEach(() => dir.cleanup());

  describe('no D-Bus session', () => {
    const env = () => ({ ...process.env, DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir.path, 'absent.sock')}` });

    it('auto falls back to the file store, which says why once: on the write that creates the record', async () => {
      const store = await openStore({
        mode: 'auto',
        configDir: dir.path,
        service,
        warn: (m) => warnings.push(m),
        env: env(),
      });
      expect(store.kind).toBe('file');
      expect(store.notice).toMatch(/keychain unavailable/i);
      expect(store.notice).toMatch(/absent\.sock|connect/);
      expect(store.notice).toContain(join(dir.path, 'credentials'));
      expect(warnings).toEqual([]);
      expect(await store.read(KEY)).toBeNull();
      expect(warnings).toEqual([]);
      await store.write(KEY, sampleRecord());
      expect(warnings).toEqual([store.notice]);
      // Reading it, and overwriting it as a refresh does, stay quiet; a new sign-in is told again.
      expect(await store.read(KEY)).toEqual(sampleRecord());
      await store.write(KEY, sampleRecord({ generation: 2 }));
      expect(warnings).toHaveLength(1);
      await store.write(KEY, sampleRecord({ generation: 3 }), { signIn: true });
      expect(warnings).toEqual([store.notice, store.notice]);
    });

    it('keychain mode is a usage error (exit 2) pointing at IDCLI_CREDENTIAL_STORE=file', async () => {
      const err = await rejection(
        openStore({ mode: 'keychain', configDir: dir.path, service, warn: (m) => warnings.push(m), env: env() }),
      );
      expect(err.exitCode).toBe(ExitCode.USAGE);
      expect(err.code).toBe('KEYCHAIN_UNAVAILABLE');
      expect(err.message).toMatch(/^keychain unavailable: .+; set IDCLI_CREDENTIAL_STORE=file$/);
      expect(err.message).not.toContain('\n');
      expect(warnings).toEqual([]);
    });

    it('allStores offers only the file store', async () => {
      const stores = await allStores({ configDir: dir.path, service, env: env() });
      expect(stores.map((s) => s.kind)).toEqual(['file']);
    });
  });

  describe('a Secret Service that accepts the connection and never answers', () => {
    let server: Server;
    let sockets: Socket[];
    let env: Record<string, string | undefined>;

    beforeEach(async () => {
      sockets = [];
      const path = join(dir.path, 'silent.sock');
      server = createServer((s) => {
        sockets.push(s); // held open, never written to
      });
      await new Promise<void>((r) => server.listen(path, r));
      env = { ...process.env, DBUS_SESSION_BUS_ADDRESS: `unix:path=${path}` };
    });
    afterEach(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    });

    /**
     * openStore on a clock of its own, moved by the 1 s timeout only once the helper has connected and is left
     * waiting; `early` says whether it had settled before that, `elapsed` is the clock's time it took.
     */
    async function openTimingOut(mode: 'keychain' | 'auto') {
      const clock = new FakeClock();
      const started = clock.now();
      let done = false;
      const opened = openStore({
        mode,
        configDir: dir.path,
        service,
        warn: (m) => warnings.push(m),
        timeoutMs: 1000,
        env,
        clock,
      }).finally(() => (done = true));
      opened.catch(() => {});
      await until(() => (sockets.length > 0 || done ? true : undefined), 10_000, 'the check to connect');
      const early = done;
      await clock.elapse(1000, "the keychain's timeout");
      return { opened, early, elapsed: clock.now() - started };
    }

    it('keychain mode is cut by the timeout with exit 2', async () => {
      const { opened, early, elapsed } = await openTimingOut('keychain');
      const err = await rejection(opened);
      expect(err.exitCode).toBe(ExitCode.USAGE);
      expect(err.code).toBe('KEYCHAIN_UNAVAILABLE');
      expect(err.message).toBe(
        'keychain unavailable: keychain did not answer within 1 s; set IDCLI_CREDENTIAL_STORE=file',
      );
      // Still waiting when the helper had connected, and ended when the clock reached the timeout.
      expect({ early, elapsed }).toEqual({ early: false, elapsed: 1000 });
      expect(sockets.length).toBeGreaterThan(0); // the helper really connected and was left waiting
    });

    it('auto falls back to the file store after the timeout, with a notice saying why', async () => {
      const { opened, early, elapsed } = await openTimingOut('auto');
      const store = await opened;
      expect({ early, elapsed }).toEqual({ early: false, elapsed: 1000 });
      expect(store.kind).toBe('file');
      expect(warnings).toEqual([]);
      expect(store.notice).toMatch(/did not answer within 1 s/);
    });
  });
});

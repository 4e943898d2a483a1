/**
 * SIGINT (Ctrl-C), SIGTERM (what CI runners send on cancel or time-out) and SIGHUP (a closed terminal) end `list`:
 * whole pages only on stdout, the resume hint on stderr, exit 128 + the signal's number.
 */
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { Emulator } from '../emulator/index.js';
import { list, type ListEnv, ndjson, plainItems, resumeUrl, eachTest } from '../list/helpers.js';

let emu: Emulator;
let env: ListEnv & { cleanup: () => Promise<void> };
const ITEMS = plainItems(250);

eachTest(ITEMS, (e, v) => {
  emu = e;
  env = v;
});

/** Sends `signal` (`times` over) once the walk asks for its third page, which hangs: two pages are written. */
function signalAtThirdPage(signal: NodeJS.Signals, times = 1) {
  emu.inject({ path: '/v1/items', nth: 3, fault: { kind: 'latency', ms: 20_000 } });
  return {
    onSpawn: (child: ChildProcess) => {
      const timer = setInterval(() => {
        if (emu.requests.filter((q) => q.path === '/v1/items').length >= 3) {
          clearInterval(timer);
          for (let i = 0; i < times; i++) child.kill(signal);
        }
      }, 10);
      child.on('exit', () => clearInterval(timer));
    },
  };
}

describe('idcli list stopped by a signal', () => {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    it(`${signal}: no partial line, the resume hint, exit ${code}`, async () => {
      const started = Date.now();
      const r = await list(env, ['/v1/items'], signalAtThirdPage(signal));
      expect(r.signal).toBeNull();
      expect(r.code).toBe(code);
      expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 200)));
      expect(r.stderr).toMatch(/stopped after 200 items/);
      expect(resumeUrl(r.stderr)).toBe(`${emu.baseUrl}/v1/items?pageIndex=2&pageSize=100`);
      expect(Date.now() - started).toBeLessThan(15_000);
    }, 60_000);
  }

  it('a second signal leaves at once, even while something still hangs', async () => {
    const r = await list(env, ['/v1/items'], signalAtThirdPage('SIGTERM', 2));
    expect(r.code).toBe(143);
    expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 200)));
  }, 60_000);
});

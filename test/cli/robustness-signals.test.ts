/**
 * SIGTERM (what CI runners send on cancel or time-out) and SIGHUP (a closed terminal) end `list` like Ctrl-C:
 * whole pages only on stdout, the resume hint on stderr, exit 128 + the signal's number.
 */
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

describe('idcli list stopped by a signal', () => {
  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    it(`${signal}: no partial line, the resume hint, exit ${code}`, async () => {
      // The third page hangs, so the signal arrives while the walk waits with two pages written.
      emu.inject({ path: '/v1/items', nth: 3, fault: { kind: 'latency', ms: 20_000 } });
      const started = Date.now();
      const r = await list(env, ['/v1/items'], {
        onSpawn: (child) => {
          const timer = setInterval(() => {
            if (emu.requests.filter((q) => q.path === '/v1/items').length >= 3) {
              clearInterval(timer);
              child.kill(signal);
            }
          }, 10);
          child.on('exit', () => clearInterval(timer));
        },
      });
      expect(r.signal).toBeNull();
      expect(r.code).toBe(code);
      expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 200)));
      expect(r.stderr).toMatch(/stopped after 200 items/);
      expect(resumeUrl(r.stderr)).toBe(`${emu.baseUrl}/v1/items?pageIndex=2&pageSize=100`);
      expect(Date.now() - started).toBeLessThan(15_000);
    }, 60_000);
  }

  it('a second signal leaves at once, even while something still hangs', async () => {
    emu.inject({ path: '/v1/items', nth: 3, fault: { kind: 'latency', ms: 20_000 } });
    const r = await list(env, ['/v1/items'], {
      onSpawn: (child) => {
        const timer = setInterval(() => {
          if (emu.requests.filter((q) => q.path === '/v1/items').length >= 3) {
            clearInterval(timer);
            child.kill('SIGTERM');
            child.kill('SIGTERM');
          }
        }, 10);
        child.on('exit', () => clearInterval(timer));
      },
    });
    expect(r.code).toBe(143);
    expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 200)));
  }, 60_000);
});

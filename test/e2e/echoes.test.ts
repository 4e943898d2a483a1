// Needs a process: the loop guard's memory is judged against the heap limit a process of the CLI is given.
/**
 * Links of 256 kB that never repeat: the loop guard keeps digests, not the links, so a walk whose URLs add up to more
 * than the CLI's whole heap still ends.
 */
import { describe, expect, it } from 'vitest';
import { runInTempConfig } from '../support/cli.js';
import { hostile, page } from '../support/hostile-links.js';

function run(base: string, args: string[], extra: Record<string, string> = {}) {
  return runInTempConfig(
    ['list', ...args],
    { IDCLI_API_BASE_URL: base, IDCLI_ACCESS_TOKEN: 'token-1234567890', ...extra },
    { timeoutMs: 60_000 },
  );
}

describe('long links from the server', () => {
  it('endless distinct 256 kB cursors do not pile up in memory (the loop guard keeps digests)', async () => {
    // 200 pages of 256 kB links: 50 MB of URLs, more than the 32 MB heap the CLI is given here.
    const big = 'y'.repeat(256 * 1024);
    const server = await hostile((u) => {
      const n = Number(u.searchParams.get('n') ?? '0');
      return { body: page([`{"n":${n}}`], n < 199 ? `/v1/items?n=${n + 1}&pad=${big}` : undefined) };
    });
    try {
      const r = await run(server.url, ['/v1/items'], { NODE_OPTIONS: '--max-old-space-size=32' });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout.split('\n')).toHaveLength(201);
      expect(server.requests).toBe(200);
    } finally {
      await server.close();
    }
  }, 120_000);
});

/**
 * One redaction for every line idcli writes to stderr: the error line and the logger redact what they print, so a
 * message that quotes a URL (a refusal, a hint, a --verbose trace) shows no secret whatever its author did. Each
 * command run in process; each case asserts the secret appears nowhere in stdout or stderr and the line still says
 * what is wrong.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eachTest, listCommand as list, plainItems, failFrom } from './support/list.js';
import { PIECE } from '../src/redact.js';
import { baseEnv, type CliResult, tempDir } from './support/cli.js';
import { runCommand } from './support/run-command.js';

/** Long enough to be told apart from any word idcli prints. */
const SECRETS = ['S1GNATURE0001', 'AP1KEY000002', 'PASSW0RD0003', 'S1GNATURE0004', 'AP1KEY000005'] as const;

function expectNoSecret(r: CliResult): void {
  for (const s of SECRETS) {
    expect(r.stdout).not.toContain(s);
    expect(r.stderr).not.toContain(s);
  }
}

async function api(args: string[], extra: Record<string, string>): Promise<CliResult> {
  const dir = await tempDir();
  try {
    return await runCommand(['api', ...args], {
      env: baseEnv({ IDCLI_CONFIG_DIR: dir.path, IDCLI_ACCESS_TOKEN: 'token-1234567890', ...extra }),
    });
  } finally {
    await dir.cleanup();
  }
}

describe('one redaction for every line on stderr', () => {
  it('a target that is not a URL shows its secret parameters redacted', async () => {
    const r = await api([`http://[bad/v1/x?sig=${SECRETS[0]}&api_key=${SECRETS[1]}&pageIndex=2`], {
      IDCLI_API_BASE_URL: 'http://127.0.0.1:9',
    });
    expect(r.code).toBe(2);
    expectNoSecret(r);
    expect(r.stderr).toContain(
      'not a valid URL or path: http://[bad/v1/x?sig=[redacted]&api_key=[redacted]&pageIndex=2',
    );
  });

  it.each([
    [`https://alice:${SECRETS[2]}@api.example`, "'https://[redacted]@api.example'"],
    [`https://api.example/v1?api_key=${SECRETS[1]}`, "'https://api.example/v1?api_key=[redacted]'"],
  ])('api-base-url %s is refused without showing its secret', async (base, shown) => {
    for (const how of ['env', 'flag'] as const) {
      const r =
        how === 'env'
          ? await api(['/v1/me'], { IDCLI_API_BASE_URL: base })
          : await api(['--api-base-url', base, '/v1/me'], {});
      expect(r.code).toBe(2);
      expectNoSecret(r);
      expect(r.stderr).toContain(`api-base-url must not contain credentials, a query or a fragment: ${shown}`);
    }
  });

  describe('list -o FILE', () => {
    const ctx = eachTest(plainItems(250));

    it('"holds part of another walk" and the walk before it show no signature or key, with --verbose too', async () => {
      const out = join(ctx.env.configDir, 'items.ndjson');
      failFrom(ctx.emu, 3);
      const first = await list(ctx.env, [
        `/v1/items?sig=${SECRETS[0]}&api_key=${SECRETS[1]}`,
        '--concurrency',
        '1',
        '-o',
        out,
      ]);
      expect(first.code, first.stderr).toBe(4);
      expect(first.requests.length).toBe(3);
      expectNoSecret(first);
      ctx.emu.clearFaults();
      const other = [`/v1/items?sig=${SECRETS[3]}&api_key=${SECRETS[4]}`, '--concurrency', '1', '-o', out];
      for (const extra of [[], ['--verbose']]) {
        const r = await list(ctx.env, [...other, ...extra]);
        expect(r.code).toBe(2);
        expect(r.requests).toEqual([]);
        expectNoSecret(r);
        expect(r.stderr).toContain(
          `${out} holds part of another walk: the target differs ("/v1/items?sig=[redacted]&api_key=[redacted]" there, ` +
            `"/v1/items?sig=[redacted]&api_key=[redacted]" here)`,
        );
      }
    });
  });

  describe('a lying server that echoes the access token', () => {
    const ctx = eachTest(plainItems(5));

    /** No PIECE characters in a row of the token, in any case, anywhere in what the run printed. */
    function expectNoPiece(r: CliResult, token: string): void {
      const out = `${r.stdout}\n${r.stderr}`.toLowerCase();
      const lower = token.toLowerCase();
      for (let i = 0; i + PIECE <= lower.length; i++) expect(out).not.toContain(lower.slice(i, i + PIECE));
    }

    it('a links.next with the token as its host name (lower-cased by URL parsing): exit 5, no piece of it', async () => {
      const token = ctx.env.token!;
      ctx.emu.inject({ path: '/v1/items', fault: { kind: 'next', href: `http://${token}.evil.example/` } });
      const r = await list(ctx.env, ['/v1/items']);
      expect(r.code, r.stderr).toBe(5);
      expect(r.stderr).toMatch(/links\.next points to another origin \(http:\[redacted\]\)/);
      expectNoPiece(r, token);
    });

    it('a Content-Encoding that is the token (lower-cased and clipped in the message): no piece of it', async () => {
      const token = ctx.env.token!;
      ctx.emu.inject({ path: '/v1/items', fault: { kind: 'encoding', coding: token } });
      const r = await list(ctx.env, ['/v1/items', '--verbose']);
      expect(r.code, r.stderr).toBe(5);
      expect(r.stderr).toMatch(/the response is in content coding '\[redacted\]/);
      expectNoPiece(r, token);
    });
  });
});

/**
 * A proxy that fails the CONNECT of an https:// request, each command run in process: hanging up on it, or after
 * half a status line, ends the run with exit 4 and one line naming the proxy, after at most --max-retries + 1
 * CONNECTs; a proxy that never answers ends it at IDCLI_HTTP_TIMEOUT. That a stop signal ends such a run is in
 * test/e2e/proxy-broken-connect.test.ts.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { eachBrokenConnect } from '../support/broken-connect.js';
import { cliEnv } from '../support/list.js';
import type { CliResult } from '../support/cli.js';
import { FakeClock } from '../support/clock.js';
import { runCommand } from '../support/run-command.js';
import { until } from '../support/until.js';
import { storeExpiredSignIn } from '../support/sign-in.js';
import { type ConnectFault, STACK_FRAME } from '../support/proxy.js';

const ctx = eachBrokenConnect();

function run(args: string[], extra: Record<string, string | undefined> = {}): Promise<CliResult> {
  return runCommand(args, { env: cliEnv(ctx.env, { HTTPS_PROXY: ctx.proxy?.url, ...extra }) });
}

/** The one line of a request that failed at the proxy's CONNECT. */
function failedAtProxy(request: string, retries: number): RegExp {
  const after = retries === 0 ? '' : retries === 1 ? ' \\(after 1 retry\\)' : ` \\(after ${retries} retries\\)`;
  return new RegExp(
    `^error: ${request}\\S* failed: the proxy http://127\\.0\\.0\\.1:${ctx.proxy!.port} closed the connection instead of opening the tunnel \\(CONNECT\\)${after}\\n$`,
  );
}

function expectClean(r: CliResult): void {
  expect(r.stdout).toBe('');
  expect(r.stderr).not.toMatch(STACK_FRAME);
}

const FAULTS: ConnectFault[] = ['hang-up', 'half-status-line'];

describe.each(FAULTS)('a proxy that fails the CONNECT (%s)', (fault) => {
  beforeEach(async () => {
    await ctx.start(fault);
  });

  it('list: exit 4 naming the proxy, after --max-retries + 1 CONNECTs', async () => {
    const r = await run(['list', '/v1/users', '--limit', '2', '--max-retries', '1', '--api-base-url', ctx.target]);
    expectClean(r);
    expect(r.stderr).toMatch(failedAtProxy(`GET ${ctx.target}/v1/users`, 1));
    expect(r.code).toBe(4);
    expect(ctx.proxy!.connects).toBe(2);
  }, 20_000);

  it('list --max-retries 0: one CONNECT only', async () => {
    const r = await run(['list', '/v1/users', '--limit', '2', '--max-retries', '0', '--api-base-url', ctx.target]);
    expectClean(r);
    expect(r.stderr).toMatch(failedAtProxy(`GET ${ctx.target}/v1/users`, 0));
    expect(r.code).toBe(4);
    expect(ctx.proxy!.connects).toBe(1);
  }, 20_000);

  it('api: exit 4 naming the proxy, after --max-retries + 1 CONNECTs', async () => {
    const r = await run(['api', `${ctx.target}/v1/users`, '--api-base-url', ctx.target, '--max-retries', '2']);
    expectClean(r);
    expect(r.stderr).toMatch(failedAtProxy(`GET ${ctx.target}/v1/users`, 2));
    expect(r.code).toBe(4);
    expect(ctx.proxy!.connects).toBe(3);
  }, 20_000);

  it('token --refresh: exit 4 naming the proxy after one CONNECT (a POST is not repeated)', async () => {
    ctx.env.token = undefined;
    await storeExpiredSignIn({ emu: ctx.emu, configDir: ctx.env.configDir, baseUrl: ctx.target });
    const r = await run(['token', '--refresh'], { IDCLI_BASE_URL: ctx.target });
    expectClean(r);
    expect(r.stderr).toMatch(failedAtProxy(`POST ${ctx.target}/oauth/token`, 0));
    expect(r.code).toBe(4);
    expect(ctx.proxy!.connects).toBe(1);
  }, 20_000);
});

describe('a proxy that never answers the CONNECT', () => {
  beforeEach(async () => {
    await ctx.start('silent');
  });

  it('list ends at IDCLI_HTTP_TIMEOUT with exit 4, after one CONNECT', async () => {
    const clock = new FakeClock();
    const started = clock.now();
    let r: CliResult | undefined;
    void runCommand(['list', '/v1/users', '--limit', '2', '--api-base-url', ctx.target], {
      env: cliEnv(ctx.env, { HTTPS_PROXY: ctx.proxy?.url, IDCLI_HTTP_TIMEOUT: '1' }),
      clock,
    }).then((result) => (r = result));
    await until(() => (ctx.proxy!.connects > 0 ? true : undefined), 10_000, 'the CONNECT');
    await clock.elapse(1000, 'the deadline of IDCLI_HTTP_TIMEOUT');
    // The run ends at its own deadline: one held until undici's own CONNECT timeout, minutes later, would not.
    r = await until(() => r, 10_000, 'the run to end at its deadline');
    expect(clock.now() - started).toBe(1000);
    expectClean(r);
    expect(r.stderr).toMatch(
      new RegExp(
        `^error: GET ${ctx.target}/v1/users\\S* failed: no complete response within 1 s \\(IDCLI_HTTP_TIMEOUT;`,
      ),
    );
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(r.code).toBe(4);
    expect(ctx.proxy!.connects).toBe(1);
  }, 20_000);
});

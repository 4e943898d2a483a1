/** `idcli doctor`: every check of the configuration, the network, the loopback port and the keychain, each with a fix. */
import { defineCommand, type Invocation, option } from '../../argv/define.js';
import { STORE_DEFAULTS } from '../../config.js';
import { ExitCode, IdcliError } from '../../errors.js';
import {
  type CheckResult,
  checkCertificate,
  checkClockSkew,
  checkConfig,
  checkLocalhost,
  checkProxy,
  checkReachable,
  checkRedirectPort,
  checkRuntime,
  checkStore,
  reachableSkipped,
  type StoreProbe,
} from './checks.js';
import { createHttpClient } from '../../http/client.js';
import { printable } from '../../printable.js';
import { storeOptions } from '../../oauth/session.js';
import type { EtcdStore } from '../../store/etcd-store.js';
import { openStore } from '../../store/select.js';
import { stderrStyle } from '../../style.js';
import { clockOf } from '../../clock.js';

export const command = defineCommand({
  name: 'doctor',
  summary: 'check configuration, network, port and keychain',
  description: 'Check the configuration, the network, the loopback port and the keychain, each with a fix.',
  options: { json: option.boolean({ flag: '--json', description: 'print the checks as JSON' }) },
  examples: ['idcli doctor', 'idcli doctor --json | jq \'.checks[] | select(.status != "pass")\''],
  // Runs every check even when an early one fails, so one run shows everything to fix. Exit 0 only when none failed.
  async run(o, invocation) {
    const { deps } = invocation;
    const checks = await runChecks(invocation);
    const failed = checks.filter((c) => c.status === 'fail').length;
    deps.stdout.write(
      o.json
        ? `${JSON.stringify({ ok: failed === 0, checks }, null, 2)}\n`
        : render(checks, stderrStyle(deps.stdout, deps.env)),
    );
    const hint = 'apply the fixes above and run `idcli doctor` again';
    const message = `${failed} check${failed === 1 ? '' : 's'} failed`;
    if (failed > 0) throw new IdcliError('DOCTOR_CHECKS_FAILED', message, ExitCode.USAGE, { hint });
  },
});

/** Doctor reports a broken configuration as a failed check, so it resolves the context itself. */
async function runChecks({ deps, context, settings: source }: Invocation): Promise<CheckResult[]> {
  const settings = await context().then((c) => c.settings, reported);
  const checks: CheckResult[] = [checkConfig(settings)];
  const ok = settings instanceof IdcliError ? undefined : settings;

  if (ok?.baseUrl) {
    const { log, env } = deps;
    const clock = clockOf(deps);
    const http = createHttpClient({ log, env, deadlineMs: ok.httpTimeoutMs, compress: ok.httpCompression, clock });
    try {
      const reach = await checkReachable(ok.baseUrl, http, clock, deps.signal);
      checks.push(reach.result, checkClockSkew(reach.serverDate, reach.localDate));
      checks.push(await checkCertificate('tls', 'service', ok.baseUrl, env, deps.signal, clock));
      if (ok.apiBaseUrl) checks.push(await checkCertificate('api-tls', 'API', ok.apiBaseUrl, env, deps.signal, clock));
    } finally {
      http.close();
    }
  } else {
    checks.push(reachableSkipped());
  }
  checks.push(await checkRedirectPort(ok?.redirectUri), await checkLocalhost(ok?.redirectUri, clockOf(deps)));

  // Settings that could not be resolved are reported above; the store is still probed, with the defaults.
  const { credentialStore: mode, keychainService: service } = ok ?? STORE_DEFAULTS;
  const configDir = ok?.configDir ?? source.configDir();
  const options = ok
    ? storeOptions({ settings: ok, deps })
    : { mode, configDir, service, warn: (msg: string) => deps.log.warn(msg) };
  const store = await openStore(options).catch(reported);
  const probe: StoreProbe | IdcliError =
    store instanceof IdcliError ? store : { kind: store.kind, description: store.describe(), warning: store.notice };
  checks.push(checkStore(mode, probe));
  if (!(store instanceof IdcliError) && store.kind === 'etcd') {
    // A shared sign-in depends on the cluster as a local one on its keychain: its members, quorum and permissions.
    const { checkEtcd } = await import('./etcd.js');
    const etcd = store as EtcdStore; // its kind says so
    try {
      checks.push(...(await checkEtcd(etcd, deps.now)));
    } finally {
      etcd.close();
    }
  }
  checks.push(checkProxy(deps.env), checkRuntime());
  return checks;
}

/** An IdcliError stands in for the value a step could not produce: its check reports it. Any other error is a bug. */
function reported(err: unknown): IdcliError {
  if (err instanceof IdcliError) return err;
  throw err;
}

function render(checks: CheckResult[], style: ReturnType<typeof stderrStyle>): string {
  const mark = { pass: style.ok('ok  '), warn: style.warn('warn'), fail: style.error('FAIL') };
  const width = Math.max(...checks.map((c) => c.title.length));
  return checks
    .map((c) => {
      // Details may quote the server (a status line, an error): its control characters stay off the terminal.
      const line = `${mark[c.status]}  ${c.title.padEnd(width)}  ${printable(c.detail)}\n`;
      return c.fix ? `${line}      ${' '.repeat(width)}  fix: ${c.fix}\n` : line;
    })
    .join('');
}

/**
 * Names the test during which the suite's gnome-keyring died. scripts/with-keyring.sh records the daemon's exit
 * in IDCLI_TEST_KEYRING_DIR; nothing restarts it, so every keychain test after it fails with "no Secret Service",
 * and this line says which test it died under, and how. Only reports: the tests keep their own results.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, type RunnerTestCase } from 'vitest';

const dir = process.env.IDCLI_TEST_KEYRING_DIR;

if (dir) {
  const started = new Map<string, number>();
  beforeEach((ctx) => {
    started.set(ctx.task.id, Date.now());
  });
  afterEach((ctx) => {
    const since = started.get(ctx.task.id);
    started.delete(ctx.task.id);
    const death = daemonExit(dir);
    if (death === null || since === undefined || death.at < since) return;
    const name = testName(ctx.task);
    appendFileSync(join(dir, 'died-during'), `${name}\n`);
    process.stderr.write(`gnome-keyring-daemon died during ${name} (${death.how})\n`);
  });
}

/** When and how the daemon ended, or null while it runs. */
function daemonExit(dir: string): { at: number; how: string } | null {
  let text: string;
  try {
    text = readFileSync(join(dir, 'daemon.exit'), 'utf8');
  } catch {
    return null;
  }
  const [code = NaN, at = NaN] = text.trim().split(' ').map(Number);
  const signal = Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0];
  const how = signal ? `killed by ${signal}` : `exit status ${code}`;
  return { at, how: [how, lastError(dir)].filter(Boolean).join(': ') };
}

/** The daemon's last error line, e.g. GLib's reason for aborting, without its pid and time. */
function lastError(dir: string): string {
  let log = '';
  try {
    log = readFileSync(join(dir, 'daemon.log'), 'utf8');
  } catch {
    return '';
  }
  const line = log.split('\n').findLast((l) => /ERROR|CRITICAL|WARNING/.test(l)) ?? '';
  return line.replace(/^\([^)]*\): /, '').replace(/ [\d:.]+: /, ' ');
}

/** The test's path as vitest prints it: file > describe > … > test. */
function testName(task: RunnerTestCase): string {
  const names = [task.name];
  for (let suite = task.suite; suite && suite !== task.file; suite = suite.suite) names.unshift(suite.name);
  return [task.file.name, ...names].join(' > ');
}

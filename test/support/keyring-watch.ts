/**
 * Names the tests during which the suite's gnome-keyring died. scripts/keyring-daemon.sh records each daemon's exit
 * in IDCLI_TEST_KEYRING_DIR, and D-Bus starts another on the next call; a test that failed because of a death says
 * so in this line, and scripts/with-keyring.sh repeats it at the end of the run. Only reports: the tests keep their
 * own results.
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
    if (since === undefined) return;
    for (const death of daemonExits(dir).filter((d) => d.at >= since)) {
      const name = testName(ctx.task);
      appendFileSync(join(dir, 'died-during'), `${death.at} ${name}\n`);
      process.stderr.write(`gnome-keyring-daemon died during ${name} (${death.how})\n`);
    }
  });
}

/** When and how each daemon so far ended: "<status> <ms> <pid> <race|other> <last error line>" lines. */
function daemonExits(dir: string): { at: number; how: string }[] {
  let text: string;
  try {
    text = readFileSync(join(dir, 'daemon.exits'), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [code = '', at = '', , , ...last] = line.split(' ');
      const signal = Object.entries(constants.signals).find(([, n]) => n === Number(code) - 128)?.[0];
      const how = signal ? `killed by ${signal}` : `exit status ${code}`;
      return { at: Number(at), how: [how, last.join(' ')].filter(Boolean).join(': ') };
    });
}

/** The test's path as vitest prints it: file > describe > … > test. */
function testName(task: RunnerTestCase): string {
  const names = [task.name];
  for (let suite = task.suite; suite && suite !== task.file; suite = suite.suite) names.unshift(suite.name);
  return [task.file.name, ...names].join(' > ');
}

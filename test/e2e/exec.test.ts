// Needs a process: idcli's own command line, stdio handed on, stop signals and exit statuses of processes.
/**
 * `idcli exec` as a process: the token is in neither process's command line, the command's stdio is idcli's own, stop
 * signals are passed on (a Ctrl-C at a terminal reaches the command once), and a command killed by signal n makes
 * idcli exit 128 + n. What needs no process of idcli's own is in test/commands/exec/command.test.ts. The tests run at the same time, each
 * with a harness of its own, as they spend their time waiting on processes.
 */
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { harness, type Harness } from '../support/harness.js';
import type { TokenResponse } from '../emulator/index.js';
import { IDCLI } from '../support/cli.js';
import { onTerminal } from '../support/pty.js';
import { until } from '../support/until.js';
import { seedSignIn } from '../support/credential.js';

const CHILD = join(import.meta.dirname, '..', 'support', 'fixtures', 'exec-child.mjs');
type Report = { token?: string; self: string; parent: string };
const reportIn = (stdout: string): Report => JSON.parse(stdout.split('\n')[0]!) as Report;

/** Runs `test` with a harness of its own holding a sign-in. */
async function signedIn(test: (h: Harness, t: TokenResponse) => Promise<void>): Promise<void> {
  const h = await harness();
  try {
    await test(h, await seedSignIn(h));
  } finally {
    await h.close();
  }
}

describe.concurrent('exec: the command and its exit', () => {
  it("the token is in neither the command's command line nor idcli's", ({ expect }) =>
    signedIn(async (h, t) => {
      const r = await h.run(['exec', '--', process.execPath, CHILD, 'IDCLI_ACCESS_TOKEN']);
      expect(r.code, r.stderr).toBe(0);
      const report = reportIn(r.stdout);
      expect(report.token).toBe(t.access_token);
      // Both processes: the command's own line, and idcli's (the command's parent).
      expect(report.self).toContain(CHILD);
      expect(report.parent).toContain('exec');
      expect(report.self).not.toContain(t.access_token);
      expect(report.parent).not.toContain(t.access_token);
    }));

  it("its stdin, stdout and stderr are the command's; no shell reads its arguments", ({ expect }) =>
    signedIn(async (h) => {
      const r = await h.run(
        ['exec', '--', 'sh', '-c', 'cat; echo "$1" >&2', 'sh', '$HOME *'],
        {},
        { input: 'hello\n' },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('hello\n');
      expect(r.stderr).toBe('$HOME *\n');
    }));

  it('exits 128 + n when signal n ended the command', ({ expect }) =>
    signedIn(async (h) => {
      const [term, kill] = await Promise.all([
        h.run(['exec', '--', 'sh', '-c', 'kill -TERM $$']),
        h.run(['exec', '--', 'sh', '-c', 'kill -KILL $$']),
      ]);
      expect(term.code, term.stderr).toBe(143);
      expect(kill.code, kill.stderr).toBe(137);
    }));

  it.for(['SIGINT', 'SIGTERM', 'SIGHUP'] as const)('passes %s on and exits as the command did', (signal, { expect }) =>
    signedIn(async (h) => {
      let stdout = '';
      const r = await h.run(
        ['exec', '--', process.execPath, CHILD, 'IDCLI_ACCESS_TOKEN', 'wait'],
        {},
        {
          // A session of its own: run from a terminal, the suite's foreground group would make SIGINT the terminal's.
          prefix: ['setsid'],
          onSpawn: (idcli) => {
            idcli.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
            void until(() => (stdout.includes('ready\n') ? true : undefined), 20_000, 'the command to start').then(() =>
              idcli.kill(signal),
            );
          },
        },
      );
      const n = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 }[signal];
      expect(r.stdout).toContain(`got ${signal}\n`);
      expect(r.code, r.stderr).toBe(40 + n);
    }),
  );

  it('a Ctrl-C typed at the terminal reaches the command once, not again through idcli', ({ expect }) =>
    signedIn(async (h) => {
      let stage = 0;
      let watch: (raw: string) => void = () => {};
      // `exec`: a shell between the terminal and idcli would die of the Ctrl-C itself, and the terminal with it.
      const r = await onTerminal(
        `exec ${IDCLI} --verbose exec -- ${process.execPath} ${CHILD} IDCLI_ACCESS_TOKEN count`,
        {
          env: h.env(),
          timeoutMs: 30_000,
          keyboard: (type) => {
            // Ctrl-C once the command runs; `q` once the command got it and idcli has said what it did with its own.
            watch = (raw: string) => {
              if (stage === 0 && raw.includes('ready')) {
                stage = 1;
                type('\x03');
              } else if (stage === 1 && raw.includes('SIGINT 1') && /SIGINT (not )?passed on/.test(raw)) {
                stage = 2;
                type('q\n');
              }
            };
          },
          onOutput: (raw) => watch(raw),
        },
      );
      expect(r.raw).toContain('SIGINT not passed on: the terminal sent it to the command too');
      expect(r.raw, r.raw).toContain('count=1');
      expect(r.code).toBe(130);
    }));
});

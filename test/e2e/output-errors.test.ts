// Needs a process: what is judged is a real process's stdout and stderr on /dev/full, a file at its size
// limit and a pipe whose reader left, set up by a real shell.
/**
 * Output that cannot be written is a failure (docs/cli.md, Exit codes): stdout on /dev/full, or on a
 * file that stops growing mid-walk, ends with exit 1 and one line saying so; only a reader that left (EPIPE) is
 * success. Everything runs the BUILT CLI with its stdout redirected by a real shell.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, ndjson, plainItems, resumeUrl, shell, eachTest } from '../support/list.js';
import { baseEnv, expectOneErrorLine, IDCLI as idcli } from '../support/cli.js';
import { runCommand } from '../support/run-command.js';

describe('--version and --help on a full disk', () => {
  for (const flag of ['--version', '--help', '-h', 'list --help']) {
    it(`idcli ${flag} > /dev/full: exit 1, one line, no stack trace`, async () => {
      const r = await shell(`${idcli} ${flag} > /dev/full`, baseEnv());
      expect(r.code).toBe(1);
      expectOneErrorLine(r, /cannot write the output \(ENOSPC\)/, { alone: false });
    });
  }

  it('a reader that left before --version was written is still success (EPIPE)', async () => {
    // The reader closes its end of the pipe, then says so through a FIFO; only then does idcli start.
    const script = [
      'd=$(mktemp -d) && mkfifo "$d/gone"',
      `(read -r _ < "$d/gone"; ${idcli} --version; echo "idcli=$?" >&2) | (exec 0<&-; echo gone > "$d/gone")`,
      'rm -r "$d"',
    ].join('\n');
    const r = await shell(script, baseEnv());
    expect(r.stderr).toContain('idcli=0');
    expect(r.stderr).not.toMatch(/error/);
  });
});

describe('every command writing to stdout fails on a full disk', () => {
  const ctx = eachTest([]);

  const commands = [
    'token',
    'token --json',
    'status',
    'status --json',
    'config list',
    'config get scope',
    'completion bash',
    'doctor --json',
  ];
  for (const command of commands) {
    it(`idcli ${command} > /dev/full: exit 1 with a message`, async () => {
      const vars = cliEnv(ctx.env);
      expect((await runCommand(['config', 'set', 'scope', 'extra'], { env: vars })).code).toBe(0);
      const r = await shell(`${idcli} ${command} > /dev/full`, vars);
      expect(r.code).toBe(1);
      expectOneErrorLine(r, /cannot write the output \(ENOSPC\); check the disk/, { alone: false });
    }, 30_000);
  }

  it('the same commands still succeed on a writable file', async () => {
    const vars = cliEnv(ctx.env);
    expect((await runCommand(['config', 'set', 'scope', 'extra'], { env: vars })).code).toBe(0);
    const r = await shell(`${idcli} config list > "$OUT" && cat "$OUT"`, {
      ...vars,
      OUT: join(ctx.env.configDir, 'out'),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('scope=extra\n');
  });
});

describe('idcli list to an output that fails', () => {
  const ITEMS = plainItems(5000);

  const ctx = eachTest(ITEMS);

  it('> /dev/full: exit 1, the count (0) and the resume command', async () => {
    const r = await shell(`${idcli} list /v1/items > /dev/full`, cliEnv(ctx.env));
    expect(r.code).toBe(1);
    expectOneErrorLine(r, /cannot write the output \(ENOSPC\)/, { alone: false });
    expect(r.stderr).toMatch(/stopped after 0 items; resume with: idcli list '/);
  }, 60_000);

  it('a file that cannot grow past 40 kB mid-walk: exit 1, whole pages only, the resume fetches the rest', async () => {
    const out = join(ctx.env.configDir, 'out.ndjson');
    // RLIMIT_FSIZE makes write(2) short at the limit and then fail (EFBIG), as a disk that fills up does; SIGXFSZ
    // is ignored so the write error reaches idcli instead of killing it.
    const r = await shell(`trap '' XFSZ; ulimit -f 40; ${idcli} list /v1/items > "$OUT"`, {
      ...cliEnv(ctx.env),
      OUT: out,
    });
    expect(r.code).toBe(1);
    expectOneErrorLine(r, /cannot write the output \(EFBIG\)/, { alone: false });
    const written = Number(/stopped after (\d+) items/.exec(r.stderr)?.[1]);
    expect(written).toBeGreaterThan(0);
    expect(written % 100).toBe(0); // whole pages only
    // The file holds exactly the complete items told: what landed of the page that failed was cut off again.
    expect(await readFile(out, 'utf8')).toBe(ndjson(ITEMS.slice(0, written)));
    const resume = resumeUrl(r.stderr);
    expect(resume).toBe(`${ctx.emu.baseUrl}/v1/items?pageIndex=${written / 100}&pageSize=100`);
    const rest = await runCommand(['list', resume!], { env: cliEnv(ctx.env) });
    expect(rest.code).toBe(0);
    expect(rest.stdout).toBe(ndjson(ITEMS.slice(written)));
  }, 60_000);

  it('appending (>>) to a file that cannot grow: what was there stays, then whole pages only', async () => {
    const out = join(ctx.env.configDir, 'out.ndjson');
    const before = '{"kept":"from an earlier run"}\n';
    await writeFile(out, before);
    const r = await shell(`trap '' XFSZ; ulimit -f 40; ${idcli} list /v1/items >> "$OUT"`, {
      ...cliEnv(ctx.env),
      OUT: out,
    });
    expect(r.code).toBe(1);
    const written = Number(/stopped after (\d+) items/.exec(r.stderr)?.[1]);
    expect(written).toBeGreaterThan(0);
    expect(await readFile(out, 'utf8')).toBe(before + ndjson(ITEMS.slice(0, written)));
  }, 60_000);

  it('a reader that leaves (| head) is still exit 0', async () => {
    const r = await shell(`${idcli} list /v1/items | head -n 3; echo "idcli=\${PIPESTATUS[0]}" >&2`, cliEnv(ctx.env));
    expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 3)));
    expect(r.stderr).toContain('idcli=0');
  }, 60_000);
});

describe('a stderr that cannot be written changes nothing', () => {
  const ITEMS = plainItems(250);

  const ctx = eachTest(ITEMS);

  it('a 500 on the second page: still exit 4 with the first page on stdout, with --verbose too', async () => {
    for (const verbose of ['', '--verbose']) {
      ctx.emu.inject({ path: '/v1/items', nth: 2, fault: { kind: 'status', status: 500 } });
      const r = await shell(
        `${idcli} list ${verbose} --max-retries 0 --concurrency 1 /v1/items 2>/dev/full`,
        cliEnv(ctx.env),
      );
      expect(r.code).toBe(4);
      expect(r.stdout).toBe(ndjson(ITEMS.slice(0, 100)));
    }
  }, 60_000);

  it('a walk that succeeds still writes every item and exits 0, with --verbose tracing every request', async () => {
    for (const verbose of ['', '--verbose']) {
      const r = await shell(`${idcli} list ${verbose} /v1/items 2>/dev/full`, cliEnv(ctx.env));
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(ndjson(ITEMS));
    }
  }, 60_000);

  it('errors keep their exit codes: a usage error 2, a missing sign-in 3, a lost output 1', async () => {
    const vars = cliEnv({ ...ctx.env, token: undefined });
    expect((await shell(`${idcli} list --limit x /v1/items 2>/dev/full`, vars)).code).toBe(2);
    expect((await shell(`${idcli} token --verbose 2>/dev/full`, vars)).code).toBe(3);
    expect((await shell(`${idcli} --version >/dev/full 2>/dev/full`, vars)).code).toBe(1);
    expect((await shell(`${idcli} completion bash >/dev/full 2>/dev/full`, vars)).code).toBe(1);
  }, 60_000);
});

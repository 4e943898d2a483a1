// Needs a process: a CA file that blocks would hang the CLI, which only a process killed at a deadline shows.
/**
 * CA files that would wait or read for ever, with the BUILT CLI in a process of its own: SSL_CERT_FILE, SSL_CERT_DIR
 * and NODE_EXTRA_CA_CERTS naming a FIFO or /dev/zero, and a hashed SSL_CERT_DIR whose entries link to every kind of
 * bad file. The run goes on within a deadline, with one warning naming the variable, the path and why; the HTTPS
 * front it talks to is trusted through another variable, or, when the bad one was to trust it, the run ends with
 * the usual untrusted-certificate error.
 */
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, type CliResult, runCli } from '../support/cli.js';
import { BAD, expectFinished, listed, useCaFiles } from '../support/ca-files.js';

/** Far beyond a healthy run; a run that waits on a FIFO is killed here and fails the test. */
const DEADLINE_MS = 30_000;

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('build the CLI first: npm run build');
});

const files = useCaFiles();

const list = (extra: Record<string, string>): Promise<CliResult> =>
  files.list(extra, (args, env) => runCli(args, { timeoutMs: DEADLINE_MS, env }));

const blocking = BAD.filter((b) => b.blocks);

describe.each(blocking)('SSL_CERT_FILE naming $name', (b) => {
  it('is skipped with one warning, and the run goes on', async () => {
    const r = await list({ SSL_CERT_FILE: b.path(files), NODE_EXTRA_CA_CERTS: files.pki.caFile });
    expectFinished(r);
    expect(r.stderr).toBe(`warning: ignoring SSL_CERT_FILE ${b.path(files)}: ${b.why}\n`);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(listed);
  });
});

describe('SSL_CERT_DIR', () => {
  it.each(blocking)('naming $name is skipped with one warning, and the run goes on', async (b) => {
    const r = await list({ SSL_CERT_DIR: b.path(files), NODE_EXTRA_CA_CERTS: files.pki.caFile });
    expectFinished(r);
    expect(r.stderr).toBe(`warning: ignoring SSL_CERT_DIR ${b.path(files)}: it is not a directory\n`);
    expect(r.code).toBe(0);
  });

  it('a hashed directory of links to a FIFO, /dev/zero, a directory, garbage and an oversized file: the run goes on', async () => {
    const r = await list({ SSL_CERT_DIR: files.at('hashed'), NODE_EXTRA_CA_CERTS: files.pki.caFile });
    expectFinished(r);
    expect(r.code, r.stderr).toBe(0);
    // Where Node reads the directory itself (tls.getCACertificates), it skips such entries in silence; where idcli
    // reads it, each is named once.
    for (const line of r.stderr.split('\n').filter(Boolean))
      expect(line).toMatch(/^warning: ignoring \S+\/0000000\d\.0 in SSL_CERT_DIR: it (is|holds) /);
  });
});

describe.each(blocking.filter((b) => b.name !== 'a FIFO'))('NODE_EXTRA_CA_CERTS naming $name', (b) => {
  // A FIFO there stops Node itself, before or while it loads TLS, whatever idcli does (docs/cli.md).
  it('is skipped with one warning; the certificate it was to trust is not trusted', async () => {
    const r = await list({ NODE_EXTRA_CA_CERTS: b.path(files) });
    expectFinished(r);
    const lines = r.stderr.split('\n').filter(Boolean);
    expect(lines[0]).toBe(`warning: ignoring NODE_EXTRA_CA_CERTS ${b.path(files)}: ${b.why}`);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^error: GET .* the server's TLS certificate is not trusted/),
    ]);
    expect(r.code).toBe(4);
  });
});

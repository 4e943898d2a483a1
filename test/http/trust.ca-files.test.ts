/**
 * CA files that are not CA files, each command run in process: SSL_CERT_FILE, SSL_CERT_DIR and NODE_EXTRA_CA_CERTS
 * naming a directory, garbage or a file past the bound. The run goes on, with one warning naming the variable, the
 * path and why; the HTTPS front it talks to is trusted through another variable, or, when the bad one was to trust
 * it, the run ends with the usual untrusted-certificate error. A FIFO and an endless device, whose fault would be a
 * hang, are in test/e2e/ca-files.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { type CliResult } from '../support/cli.js';
import { runCommand } from '../support/run-command.js';
import { BAD, expectFinished, listed, useCaFiles } from '../support/ca-files.js';

const files = useCaFiles();

const list = (extra: Record<string, string>): Promise<CliResult> =>
  files.list(extra, (args, env) => runCommand(args, { env }));

const bad = BAD.filter((b) => !b.blocks);

describe.each(bad)('SSL_CERT_FILE naming $name', (b) => {
  it('is skipped with one warning, and the run goes on', async () => {
    const r = await list({ SSL_CERT_FILE: b.path(files), NODE_EXTRA_CA_CERTS: files.pki.caFile });
    expectFinished(r);
    expect(r.stderr).toBe(`warning: ignoring SSL_CERT_FILE ${b.path(files)}: ${b.why}\n`);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(listed);
  });
});

describe('SSL_CERT_DIR', () => {
  it('naming a file is skipped with one warning, and the run goes on', async () => {
    const r = await list({ SSL_CERT_DIR: files.at('garbage.pem'), NODE_EXTRA_CA_CERTS: files.pki.caFile });
    expectFinished(r);
    expect(r.stderr).toBe(`warning: ignoring SSL_CERT_DIR ${files.at('garbage.pem')}: it is not a directory\n`);
    expect(r.code).toBe(0);
  });
});

describe.each(bad)('NODE_EXTRA_CA_CERTS naming $name', (b) => {
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

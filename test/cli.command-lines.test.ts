/**
 * Command lines → the options a command's body gets, or the usage error it is refused with, in-process and from a
 * table (as gh tests its flags): parsing, the table's reading and each command's `check`, with no process spawned and
 * nothing read or sent.
 */
import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../src/errors.js';
import { parseArgv } from '../src/argv/parse.js';
import { SURFACE } from '../src/commands/index.js';
import { rejected } from './support/thrown.js';

/** The checked options of one command line, as `run` would get them. */
async function optionsOf(line: readonly string[]): Promise<unknown> {
  const parsed = await parseArgv(line, SURFACE);
  if (parsed.kind !== 'run') throw new Error(`expected a command, got ${parsed.kind}`);
  return parsed.command.read(parsed);
}

const READ: readonly [string[], Record<string, unknown>][] = [
  [['token'], { json: false, header: false, refresh: false, minTtl: undefined }],
  [['token', '--json', '--min-ttl', '600'], { json: true, minTtl: 600 }],
  [['token', '--header', '--refresh'], { header: true, refresh: true }],
  [['list', 'users'], { target: 'users', concurrency: 'auto', count: false, restart: false, maxRetries: 5 }],
  [['list', 'users', '--concurrency', '1', '--limit', '10'], { concurrency: 1, limit: 10, pageSize: undefined }],
  [['list', 'users', '--page-size', '250'], { pageSize: 250 }],
  [['list', 'users', '--page-size', 'service'], { pageSize: 'service' }],
  [['api', '-X', 'PATCH', 'users/1', '-f', 'a=1', '-f', 'b=2'], { method: 'PATCH', field: ['a=1', 'b=2'] }],
  [['login', '--no-browser'], { browser: false }],
];

const REFUSED: readonly [string[], ErrorCode][] = [
  [['token', '--json', '--header'], 'USAGE_CONFLICTING_OPTIONS'],
  [['list', 'users', '--concurrency', '0'], 'USAGE_NUMBER_OUT_OF_RANGE'],
  [['list', 'users', '--limit', 'x'], 'USAGE_NOT_A_NUMBER'],
  [['list', 'users', '--page-size', 'x'], 'USAGE_NOT_A_NUMBER'],
  [['list', 'users', '--page-size', '-1'], 'USAGE_NOT_A_NUMBER'],
  [['status', '--page-size', '5'], 'USAGE_UNKNOWN_OPTION'],
  [['api', 'users', '-X'], 'USAGE_OPTION_VALUE_MISSING'],
  [['list', 'users', '--restart'], 'USAGE_CONFLICTING_OPTIONS'],
  [['list', 'users', '-o', '-', '--restart'], 'USAGE_CONFLICTING_OPTIONS'],
  [['list', 'users', '--count', '-o', 'users.ndjson'], 'USAGE_CONFLICTING_OPTIONS'],
  [['api', 'users', '-f', 'a=1', '--input', 'body.json'], 'USAGE_CONFLICTING_OPTIONS'],
  [['api', 'users', '--input', ''], 'USAGE_OPTION_VALUE_MISSING'],
  [['api', ' '], 'TARGET_MISSING'],
  [['api', 'users', '-X', 'NO PE'], 'API_METHOD_INVALID'],
  [['api', 'users', '-X', 'trace'], 'API_METHOD_REFUSED'],
  [['api', 'users', '-f', '=1'], 'API_FIELD_INVALID'],
  [['api', 'users', '-f', 'a=1', '-f', 'a=2'], 'API_FIELD_REPEATED'],
  [['api', 'users', '-H', 'Authorization: Bearer x'], 'API_HEADER_REFUSED'],
  [['api', 'users', '-H', 'no colon'], 'API_HEADER_INVALID'],
];

describe('command lines', () => {
  it.each(READ)('%j reads as the options its body gets', async (line, expected) => {
    expect(await optionsOf(line)).toMatchObject(expected);
  });

  it.each(REFUSED)('%j is a usage error (exit 2) before anything runs', async (line, code) => {
    expect((await rejected(() => optionsOf(line), 2)).code).toBe(code);
  });
});

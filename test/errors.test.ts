/**
 * The codes of idcli's errors: one list in src/errors.ts, each code unique, each one used, and carried by the errors
 * built with it, so that programs and tests can tell failures apart without reading their wording.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ERROR_CODES,
  ExitCode,
  IdcliError,
  interrupted,
  notLoggedIn,
  OutputError,
  outputError,
  usageError,
} from '../src/errors.js';
import { assertString, errCode, errReason } from '../src/shape.js';
import { CredentialRecordError } from '../src/store/record.js';

const SRC = join(import.meta.dirname, '../src');
const codes: readonly string[] = ERROR_CODES;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [readFileSync(join(dir, e.name), 'utf8')]
        : [],
  );
}

describe('ERROR_CODES', () => {
  it('is a list of unique UPPER_SNAKE codes', () => {
    expect(codes.length).toBeGreaterThan(0);
    for (const code of codes) expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('holds no code that no error is built with', () => {
    const text = sources(SRC)
      .join('\n')
      .replace(/export const ERROR_CODES = \[[\s\S]*?\] as const;/, '');
    expect(codes.filter((code) => !text.includes(`'${code}'`))).toEqual([]);
  });
});

describe('IdcliError', () => {
  it('carries its code beside its exit code', () => {
    const err = new IdcliError('API_STATUS', 'GET /x failed: HTTP 500', ExitCode.NETWORK, { status: 500 });
    expect(err).toMatchObject({ code: 'API_STATUS', exitCode: ExitCode.NETWORK, status: 500 });
    expect(usageError('USAGE_UNKNOWN_OPTION', "unknown option '-Z'")).toMatchObject({
      code: 'USAGE_UNKNOWN_OPTION',
      exitCode: ExitCode.USAGE,
    });
  });

  it('the shared helpers and subclasses carry the code of their kind', () => {
    expect(notLoggedIn()).toMatchObject({ code: 'NOT_LOGGED_IN', exitCode: ExitCode.AUTH });
    expect(notLoggedIn('REFRESH_TOKEN_MISSING', 'no refresh token')).toMatchObject({
      code: 'REFRESH_TOKEN_MISSING',
      exitCode: ExitCode.AUTH,
      hint: 'run `idcli login`',
    });
    expect(interrupted()).toMatchObject({ code: 'INTERRUPTED', exitCode: ExitCode.INTERRUPTED });
    const lost = outputError(Object.assign(new Error('no space'), { code: 'ENOSPC' }));
    expect(lost).toBeInstanceOf(OutputError);
    expect(lost).toMatchObject({ code: 'OUTPUT_NOT_WRITTEN', exitCode: ExitCode.INTERNAL });
    expect(lost.message).toBe('cannot write the output (ENOSPC)');
    expect(new CredentialRecordError('not JSON').at('file x')).toMatchObject({
      code: 'CREDENTIALS_UNREADABLE',
      exitCode: ExitCode.AUTH,
    });
  });

  it("is not taken for a system error: its code is idcli's own", () => {
    const err = usageError('TARGET_MISSING', 'no path or URL to send the request to');
    expect(errCode(err)).toBeUndefined();
    expect(errReason(err)).toBe('no path or URL to send the request to');
    expect(errCode(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBe('ENOENT');
  });
});

describe('assertString', () => {
  it("lets a string through and throws the caller's own error, named, for anything else", () => {
    const fail = (what: string) => new IdcliError('CONFIG_FILE_INVALID', `${what} must be a string`, ExitCode.USAGE);
    const value: unknown = 'x';
    assertString(value, 'scope', fail);
    expect(value.length).toBe(1);
    for (const bad of [1, null, undefined, {}, ['x']]) {
      expect(() => assertString(bad, 'scope', fail)).toThrow(
        expect.objectContaining({ code: 'CONFIG_FILE_INVALID', message: 'scope must be a string' }),
      );
    }
  });
});

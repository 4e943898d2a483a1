import { describe, expect, it } from 'vitest';
import { ExitCode, IdcliError } from '../../src/errors.js';
import { accountName, CredentialRecordError, decodeRecord, encodeRecord } from '../../src/store/record.js';
import { KEY, sampleRecord } from '../support/store.js';

function decodeError(text: string): CredentialRecordError {
  try {
    decodeRecord(text);
  } catch (err) {
    expect(err).toBeInstanceOf(CredentialRecordError);
    return err as CredentialRecordError;
  }
  throw new Error('decodeRecord accepted garbage');
}

describe('credential record', () => {
  it('round-trips every field', () => {
    const record = sampleRecord();
    expect(decodeRecord(encodeRecord(record))).toEqual(record);
  });

  it('round-trips a minimal record and omits absent fields', () => {
    const record = { version: 1 as const, updatedAt: 5, generation: 0 };
    const text = encodeRecord(record);
    expect(JSON.parse(text)).toEqual(record);
    expect(decodeRecord(text)).toEqual(record);
  });

  it('encodes equal records to equal bytes regardless of property order', () => {
    const a = sampleRecord();
    const b = Object.fromEntries(Object.entries(a).reverse()) as typeof a;
    expect(encodeRecord(b)).toBe(encodeRecord(a));
  });

  it('drops unknown fields on decode and on encode', () => {
    const text = JSON.stringify({ ...sampleRecord(), extra: 'x', nested: { a: 1 } });
    expect(decodeRecord(text)).toEqual(sampleRecord());
    expect(encodeRecord({ ...sampleRecord(), extra: 'x' } as ReturnType<typeof sampleRecord>)).not.toContain('extra');
  });

  it('reads an expiry no date can hold as a year after the record was written, or as long expired', () => {
    const year = 365 * 24 * 60 * 60 * 1000;
    const at = (expiresAt: number) => decodeRecord(JSON.stringify(sampleRecord({ expiresAt }))).expiresAt;
    const { updatedAt } = sampleRecord();
    expect(at(1e303)).toBe(updatedAt + year);
    expect(at(Number.MAX_SAFE_INTEGER * 1000)).toBe(updatedAt + year);
    expect(at(-1e300)).toBe(0);
    // Any expiry a date can hold is kept as it is, however far off.
    expect(at(8.64e15)).toBe(8.64e15);
    expect(at(sampleRecord().expiresAt!)).toBe(sampleRecord().expiresAt);
    expect(() => new Date(at(1e303)!).toISOString()).not.toThrow();
  });

  it('names the account by profile, client id and base URL', () => {
    expect(accountName(KEY)).toBe(`default|${KEY.clientId}|https://id.example.test`);
    expect(accountName({ ...KEY, profile: 'work' })).not.toBe(accountName(KEY));
    expect(accountName({ ...KEY, baseUrl: 'https://other.test' })).not.toBe(accountName(KEY));
  });

  const garbage: [string, string, RegExp][] = [
    ['not JSON', '{"refreshToken": "rt-SECRET', /not JSON/],
    ['empty', '', /not JSON/],
    ['null', 'null', /not an object/],
    ['an array', '[1,2]', /not an object/],
    ['a string', '"rt-SECRET"', /not an object/],
    ['no version', JSON.stringify({ updatedAt: 1, generation: 1 }), /unknown format version/],
    ['a newer version', JSON.stringify({ ...sampleRecord(), version: 2 }), /newer idcli/],
    ['a numeric token', JSON.stringify({ ...sampleRecord(), refreshToken: 42 }), /refreshToken is not a string/],
    ['a string expiry', JSON.stringify({ ...sampleRecord(), expiresAt: 'soon' }), /expiresAt is not a number/],
    ['no updatedAt', JSON.stringify({ version: 1, generation: 1 }), /updatedAt is missing/],
    ['a negative generation', JSON.stringify({ ...sampleRecord(), generation: -1 }), /generation/],
    ['a fractional generation', JSON.stringify({ ...sampleRecord(), generation: 1.5 }), /generation/],
  ];

  it.each(garbage)('rejects %s as an authentication error without echoing values', (_name, text, reason) => {
    const err = decodeError(text);
    expect(err).toBeInstanceOf(IdcliError);
    expect(err.exitCode).toBe(ExitCode.AUTH);
    expect(err.code).toBe('CREDENTIALS_UNREADABLE');
    expect(err.message).toMatch(reason);
    expect(err.hint).toMatch(/idcli login/);
    expect(err.message).not.toContain('SECRET');
    expect(err.message).not.toContain('\n');
  });

  it('says where the bad record was found', () => {
    const err = decodeError('nope').at('file /x/credentials/abc.json');
    expect(err.message).toBe('stored credentials in file /x/credentials/abc.json are unreadable (not JSON)');
    expect(err.code).toBe('CREDENTIALS_UNREADABLE');
    expect(err.exitCode).toBe(ExitCode.AUTH);
  });
});

// Apart from support.ts, which fixtures import outside vitest; this one needs vitest.
import { expect } from 'vitest';
import { IdcliError } from '../../src/errors.js';
/** The IdcliError a promise rejects with; fails the test when it resolves. */
export async function rejection(p: Promise<unknown>): Promise<IdcliError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(IdcliError);
    return err as IdcliError;
  }
  throw new Error('expected a rejection');
}

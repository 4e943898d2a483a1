import { expect } from 'vitest';
import { IdcliError } from '../../src/errors.js';

/** The IdcliError `fn` throws (any other error propagates); fails the test when it returns. */
export function thrown(fn: () => unknown, exitCode?: number): IdcliError {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof IdcliError)) throw err;
    if (exitCode !== undefined) expect(err.exitCode).toBe(exitCode);
    return err;
  }
  throw new Error('expected an IdcliError');
}

/** The IdcliError the promise `fn` returns rejects with (any other error propagates); fails the test when it resolves. */
export async function rejected(fn: () => Promise<unknown>, exitCode?: number): Promise<IdcliError> {
  try {
    await fn();
  } catch (err) {
    if (!(err instanceof IdcliError)) throw err;
    if (exitCode !== undefined) expect(err.exitCode).toBe(exitCode);
    return err;
  }
  throw new Error('expected an IdcliError');
}

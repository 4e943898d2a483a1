import { describe, expect, it } from 'vitest';
import { checkEtcdClock } from '../../../src/commands/doctor/etcd.js';

describe("doctor's clock against the etcd members", () => {
  it('passes within a few seconds, warns beyond, either way', () => {
    expect(checkEtcdClock(0)).toMatchObject({ status: 'pass', detail: 'in step with the members' });
    expect(checkEtcdClock(2.6)).toMatchObject({ status: 'pass', detail: 'this machine is 3 s ahead of the members' });
    expect(checkEtcdClock(-12)).toMatchObject({ status: 'warn' });
    expect(checkEtcdClock(-12).detail).toContain('12 s behind the members');
    expect(checkEtcdClock(30).fix).toContain('synchronise');
  });

  it('without a Date header the skew is unknown: a warning', () => {
    expect(checkEtcdClock(undefined)).toMatchObject({ status: 'warn' });
  });
});

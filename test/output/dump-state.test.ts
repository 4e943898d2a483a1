/**
 * The state file of `list -o` read back: only what this version wrote is accepted, and the setting that makes two
 * walks differ is named.
 */
import { describe, expect, it } from 'vitest';
import { identityDiff, parseState, StateUnreadable, type WalkIdentity } from '../../src/output/dump-state.js';

const walk: WalkIdentity = {
  target: 'users',
  apiBaseUrl: 'https://api.example.com/v1',
  profile: 'default',
  pageSize: null,
  pageIndex: null,
};
const good = {
  format: 'idcli list -o state',
  version: 1,
  walk,
  next: 'https://api.example.com/v1/users?pageIndex=2&pageSize=100',
  items: 200,
  bytes: 4200,
  tail: '7d0a',
};

describe('parseState', () => {
  it('reads back a state as written', () => {
    const { format: _f, version: _v, ...state } = good;
    expect(parseState(JSON.stringify(good))).toEqual(state);
  });

  it.each<[string, unknown]>([
    ['not JSON', '{'],
    ['another file', JSON.stringify({ hello: 1 })],
    ['another version', JSON.stringify({ ...good, version: 2 })],
    ['a count as text', JSON.stringify({ ...good, items: '200' })],
    ['a negative length', JSON.stringify({ ...good, bytes: -1 })],
    ['a fractional count', JSON.stringify({ ...good, items: 1.5 })],
    ['no next URL', JSON.stringify({ ...good, next: undefined })],
    ['a tail that is not hex', JSON.stringify({ ...good, tail: 'zz' })],
    ['a tail too long', JSON.stringify({ ...good, tail: 'ab'.repeat(33) })],
    ['a walk without its profile', JSON.stringify({ ...good, walk: { ...walk, profile: undefined } })],
    ['a page index as text', JSON.stringify({ ...good, walk: { ...walk, pageIndex: '1' } })],
    ['null', 'null'],
  ])('refuses %s', (_, text) => {
    expect(() => parseState(text as string)).toThrow(StateUnreadable);
  });
});

describe('identityDiff', () => {
  it('is undefined for the same walk', () => {
    expect(identityDiff(walk, { ...walk })).toBeUndefined();
  });

  it('names the first setting that differs, with both values', () => {
    expect(identityDiff(walk, { ...walk, pageSize: 50 })).toBe('--page-size differs (not given there, 50 here)');
    expect(identityDiff(walk, { ...walk, pageSize: 'auto' })).toBe(
      '--page-size differs (not given there, "auto" here)',
    );
    expect(identityDiff(walk, { ...walk, profile: 'ci' })).toBe('the profile differs ("default" there, "ci" here)');
    expect(identityDiff(walk, { ...walk, apiBaseUrl: 'https://api.example.com/v2' })).toMatch(/^api-base-url differs/);
    expect(identityDiff(walk, { ...walk, target: '/v1/users' })).toMatch(/^the target differs/);
    expect(identityDiff(walk, { ...walk, pageIndex: 3 })).toBe('--page-index differs (not given there, 3 here)');
  });
});

import { describe, expect, it } from 'vitest';
import { parseRedirectUri } from '../src/redirect-uri.js';

describe('parseRedirectUri: the one definition of an accepted redirect URI', () => {
  it('takes 127.0.0.1, [::1] and localhost with an explicit port, keeping the rest as written', () => {
    expect(parseRedirectUri('http://127.0.0.1:8765/callback')).toEqual({
      host: '127.0.0.1',
      port: 8765,
      rest: '/callback',
    });
    expect(parseRedirectUri('http://[::1]:0')).toEqual({ host: '[::1]', port: 0, rest: '' });
    expect(parseRedirectUri('http://localhost:65535/a?x=1')).toEqual({
      host: 'localhost',
      port: 65535,
      rest: '/a?x=1',
    });
  });

  it('refuses the rest of 127/8: only 127.0.0.1 is taken', () => {
    for (const other of ['http://127.0.0.2:8765/cb', 'http://127.1.2.3:8765/cb', 'http://127.255.255.255:1/']) {
      expect(parseRedirectUri(other)).toBeUndefined();
    }
  });

  it('matches as written: an upper-case scheme or host is refused, not folded', () => {
    for (const other of ['HTTP://127.0.0.1:8765/cb', 'http://LOCALHOST:8765/cb', 'Http://localhost:1/']) {
      expect(parseRedirectUri(other)).toBeUndefined();
    }
  });

  it('refuses https, other hosts, a missing or out-of-range port, and a fragment', () => {
    for (const bad of [
      'https://127.0.0.1:8765/cb',
      'http://0.0.0.0:80/cb',
      'http://example.com:8765/cb',
      'http://127.0.0.1/cb',
      'http://127.0.0.1:65536/cb',
      'http://127.0.0.1:1/cb#x',
    ]) {
      expect(parseRedirectUri(bad)).toBeUndefined();
    }
  });
});

import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { redactSecrets, redactUrl, redactValues } from '../../src/redact.js';
import { suggest } from '../../src/suggest.js';
import { colourEnabled, stderrStyle } from '../../src/style.js';

describe('redaction', () => {
  it('scrubs secret query parameters and keeps the rest', () => {
    const out = redactUrl('http://127.0.0.1:1/callback?code=SECRETCODE&state=S1&iss=https%3A%2F%2Fid&pageIndex=2');
    expect(out).not.toContain('SECRETCODE');
    expect(out).not.toContain('S1');
    expect(out).toContain('pageIndex=2');
    expect(out).toContain('code=[redacted]');
    expect(redactUrl('https://u:pw@h.example/p')).toBe('https://h.example/p');
    expect(redactUrl('not a url')).toBe('[redacted]');
  });
  it('keeps every other byte of the URL, so a redacted link still names the same page', () => {
    expect(redactSecrets('https://h.example/p?c=a+b%2Bc&access%5Ftoken=T&Token=T&x#frag')).toBe(
      'https://h.example/p?c=a+b%2Bc&access%5Ftoken=[redacted]&Token=[redacted]&x#frag',
    );
  });
  it('scrubs known values anywhere in a line', () => {
    expect(redactValues('token abcdefgh1234 sent', ['abcdefgh1234'])).toBe('token [redacted] sent');
  });
  it('the logger redacts registered secrets and honours --quiet and --verbose', () => {
    const s = new PassThrough();
    const chunks: string[] = [];
    s.on('data', (b) => chunks.push(String(b)));
    const log = createLogger(s, { verbose: true, quiet: true });
    log.addSecret('supersecretvalue');
    log.info('hidden by quiet');
    log.warn('warn supersecretvalue');
    log.verbose('trace supersecretvalue');
    expect(chunks.join('')).toBe('warning: warn [redacted]\n* trace [redacted]\n');
    const quiet = createLogger(s, { verbose: false, quiet: false });
    chunks.length = 0;
    quiet.verbose('nothing');
    quiet.info('shown');
    expect(chunks.join('')).toBe('shown\n');
  });
});

describe('suggestions', () => {
  it('finds the nearest candidate within a small distance', () => {
    expect(suggest('tokn', ['token', 'login', 'list'])).toBe('token');
    expect(suggest('bse-url', ['base-url', 'scope'])).toBe('base-url');
    expect(suggest('zzzzzz', ['token', 'login'])).toBeUndefined();
  });
});

describe('colour', () => {
  it('only on a terminal, off with NO_COLOR, forced with FORCE_COLOR', () => {
    expect(colourEnabled({ isTTY: false }, {})).toBe(false);
    expect(colourEnabled({ isTTY: true }, {})).toBe(true);
    expect(colourEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colourEnabled({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
    expect(stderrStyle({ isTTY: false }, {}).error('x')).toBe('x');
    expect(stderrStyle({ isTTY: true }, {}).error('x')).toBe('\u001b[31mx\u001b[39m');
  });
});

import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';
import { PIECE, redactLine, redactSecrets, redactUrl, redactValues } from '../src/redact.js';
import { suggest } from '../src/suggest.js';
import { colourEnabled, stderrStyle } from '../src/style.js';

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
  it('scrubs a known value percent-encoded as a query carries it, and leaves values under 8 characters', () => {
    expect(redactValues('http://h/p?t=ab%2Bcd%2Fef%3D', ['ab+cd/ef='])).toBe('http://h/p?t=[redacted]');
    expect(redactValues('http://h/ab+cd/ef=/x', ['ab+cd/ef='])).toBe('http://h/[redacted]/x');
    expect(redactValues('a short one', ['short'])).toBe('a short one');
  });
  it('a line: URL credentials and secret parameters anywhere in it, whether the URL parses or not', () => {
    expect(redactLine('not a valid URL or path: http://[bad/v1/x?sig=S3CRET&pageIndex=2')).toBe(
      'not a valid URL or path: http://[bad/v1/x?sig=[redacted]&pageIndex=2',
    );
    expect(redactLine("must not contain credentials: 'https://alice:PW12345678@h.example/v1?key=K1'")).toBe(
      "must not contain credentials: 'https://[redacted]@h.example/v1?key=[redacted]'",
    );
    expect(redactLine('the target differs ("/v1/x?sig=A1&api_key=B2" there, "/v1/x?Api%5Fkey=C3" here)')).toBe(
      'the target differs ("/v1/x?sig=[redacted]&api_key=[redacted]" there, "/v1/x?Api%5Fkey=[redacted]" here)',
    );
    expect(redactLine("form 'client_secret=S&code=C&grant_type=authorization_code'")).toBe(
      "form 'client_secret=[redacted]&code=[redacted]&grant_type=authorization_code'",
    );
    expect(redactLine('token T0K3N-0123456789 sent', ['T0K3N-0123456789'])).toBe('token [redacted] sent');
  });
  it('a line keeps what is not a secret, and reads the same redacted twice', () => {
    const plain = 'GET https://h.example/v1/users?pageIndex=2&pageSize=100 -> 200; mail alice@example.com; a=b';
    expect(redactLine(plain)).toBe(plain);
    for (const hint of [
      'HTTP_PROXY is not a valid proxy URL; use http://[user:password@]host:port',
      "-f/--field takes key=value, not 'x'",
    ])
      expect(redactLine(hint)).toBe(hint);
    const once = redactLine("resume with: idcli list 'https://u:p@h/v1?cursor=c1&sig=x#t'");
    expect(once).toBe("resume with: idcli list 'https://[redacted]@h/v1?cursor=c1&sig=[redacted]#t'");
    expect(redactLine(once)).toBe(once);
  });
  it('scrubs signatures and keys of pre-signed links and API keys, whatever their case', () => {
    const names = [
      'sig',
      'Signature',
      'X-Amz-Signature',
      'X-Amz-Credential',
      'X-Amz-Security-Token',
      'X-Goog-Signature',
      'X-Goog-Credential',
      'api_key',
      'API-Key',
      'apikey',
      'key',
      'client_secret',
      'client_assertion',
      'secret',
      'TOKEN',
    ];
    const url = `https://h.example/o?${names.map((n) => `${n}=S3CR3T`).join('&')}&pageToken=c1&cursor=c2&keys=k`;
    expect(redactSecrets(url)).toBe(
      `https://h.example/o?${names.map((n) => `${n}=[redacted]`).join('&')}&pageToken=c1&cursor=c2&keys=k`,
    );
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
    expect(log.redact('GET http://h/supersecretvalue/x')).toBe('GET http://h/[redacted]/x');
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

describe('a known secret percent-encoded in part or whole', () => {
  /** Each character as is, or as its UTF-8 bytes in %XX with each hex digit in either case. */
  const encodedCopy = (secret: string) => {
    const chars = [...secret];
    return fc
      .tuple(
        fc.array(fc.boolean(), { minLength: chars.length, maxLength: chars.length }),
        fc.array(fc.boolean(), { minLength: chars.length * 8, maxLength: chars.length * 8 }),
      )
      .map(([encode, lower]) => {
        let digit = 0;
        return chars
          .map((c, i) => {
            if (!encode[i]) return c;
            const hex = [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`);
            return [...hex.join('')].map((d) => (lower[digit++] ? d.toLowerCase() : d)).join('');
          })
          .join('');
      });
  };
  // Tokens' own alphabet, the characters a URL must encode, and any other character (multi-byte in UTF-8).
  const secretChar = fc.oneof(
    fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~'),
    fc.constantFrom(...'+/=%&?# "\\[]'),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
  );
  const secret = fc.array(secretChar, { minLength: 8, maxLength: 40 }).map((cs) => cs.join(''));
  const around = fc.constantFrom('', 'GET https://api.example.com/v1/x?t=', 'error: ', '/path/');

  it('for any secret and any mix of encoded characters, neither the secret nor the copy is left', () => {
    fc.assert(
      fc.property(
        secret.chain((s) => fc.tuple(fc.constant(s), encodedCopy(s))),
        around,
        around,
        ([s, copy], before, after) => {
          const line = `${before}${copy} and ${s}${after}`;
          for (const out of [redactValues(line, [s]), redactLine(line, [s])]) {
            expect(out).not.toContain(s);
            expect(out).not.toContain(copy);
          }
        },
      ),
    );
  });

  it('the copies a probe printed: fully encoded in upper or lower case hex, or in part', () => {
    const token = 'AT-0123456789abcdef';
    const full = [...token].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');
    for (const copy of [full, full.toLowerCase(), `%41%54-0123456789%61bcdef`])
      expect(redactLine(`GET https://api.example.com/v1/${copy}/x`, [token])).toBe(
        'GET https://api.example.com/v1/[redacted]/x',
      );
  });
});

describe('a piece of a secret, in any case', () => {
  const TOKEN_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~+/=-';
  const secret = fc.string({ unit: fc.constantFrom(...TOKEN_CHARS), minLength: 20, maxLength: 200 });
  /** How a message may carry it: as is, lower- or upper-cased (a host name), or each character's case flipped. */
  const recase = fc.constantFrom(
    (s: string) => s,
    (s: string) => s.toLowerCase(),
    (s: string) => s.toUpperCase(),
    (s: string) => [...s].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join(''),
  );
  const place = fc.constantFrom(
    (p: string) => `error: links.next points to another origin (http://${p}.evil.example)`,
    (p: string) => `error: the response is in content coding '${p}…'`,
    (p: string) => `GET https://api.example/v1/x?cursor=${p} -> 200`,
    (p: string) => `header "${p}" refused`,
    (p: string) => `https://h.example/p/${encodeURIComponent(p)}/q`,
    (p: string) => `raw ${[...p].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')} encoded`,
    (p: string) => `x${p}y`,
  );

  it('is redacted wherever it is embedded, however cut (to PIECE characters or more) or cased', () => {
    fc.assert(
      fc.property(secret, recase, place, fc.nat(), fc.nat(), (s, cased, at, a, b) => {
        const len = PIECE + (a % (s.length - PIECE + 1));
        const start = b % (s.length - len + 1);
        const line = at(cased(s.slice(start, start + len)));
        const out = redactLine(line, [s]).toLowerCase();
        const lower = s.toLowerCase();
        for (let i = 0; i + PIECE <= lower.length; i++) expect(out).not.toContain(lower.slice(i, i + PIECE));
      }),
      { numRuns: 500 },
    );
  });

  it('leaves a line with no such piece as it is', () => {
    const s = 'tokQWERTYuiop1234567890ASDFghjklZXCVbnm-_xyz';
    const line = 'GET https://api.example/v1/items?pageIndex=2 -> 200 (3 ms); tokQWERTYui is 11 characters';
    expect(redactLine(line, [s])).toBe(line);
    expect(redactLine(`host tokqwertyuiop1234567890asdfghjklzxcvbnm-_xyz.evil.example`, [s])).toBe('host [redacted]');
  });
});

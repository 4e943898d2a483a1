import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdcliError } from '../../src/errors.js';
import { noProxyForUndici, proxyFor, readProxyEnv, showProxy, wantsProxy } from '../../src/http/proxy-env.js';

const u = (s: string) => new URL(s);

describe('wantsProxy: whether the proxy-aware transport is needed at all', () => {
  it('is false without proxy variables, with empty ones, with only NO_PROXY, and with NO_PROXY=*', () => {
    expect(wantsProxy({})).toBe(false);
    expect(wantsProxy({ HTTPS_PROXY: '', http_proxy: '  ' })).toBe(false);
    expect(wantsProxy({ NO_PROXY: 'example.com', NODE_EXTRA_CA_CERTS: '/ca.pem' })).toBe(false);
    expect(wantsProxy({ HTTPS_PROXY: 'http://p:3128', NO_PROXY: '*' })).toBe(false);
  });

  it('is true for any of the four proxy variables', () => {
    for (const name of ['HTTPS_PROXY', 'HTTP_PROXY', 'https_proxy', 'http_proxy']) {
      expect(wantsProxy({ [name]: 'http://p:3128' })).toBe(true);
    }
  });
});

describe('readProxyEnv', () => {
  it('prefers the lower-case variables, as curl and undici do', () => {
    const p = readProxyEnv({
      HTTPS_PROXY: 'http://upper:1',
      https_proxy: 'http://lower:2',
      HTTP_PROXY: 'http://h:3',
      NO_PROXY: 'a',
      no_proxy: 'b',
    });
    expect(p?.httpsProxy?.href).toBe('http://lower:2/');
    expect(p?.httpsVar).toBe('https_proxy');
    expect(p?.httpProxy?.href).toBe('http://h:3/');
    expect(p?.noProxy).toBe('b');
  });

  it('sends https:// targets through the http proxy when no https proxy is set, and http:// ones direct when only HTTPS_PROXY is', () => {
    const onlyHttp = readProxyEnv({ HTTP_PROXY: 'http://h:3128' });
    expect(proxyFor(u('https://id.example.com/x'), onlyHttp!)?.host).toBe('h:3128');
    const onlyHttps = readProxyEnv({ HTTPS_PROXY: 'http://s:3128' });
    expect(proxyFor(u('https://id.example.com/x'), onlyHttps!)?.host).toBe('s:3128');
    expect(proxyFor(u('http://id.example.com/x'), onlyHttps!)).toBeUndefined();
  });

  it('accepts a bare host:port as http://', () => {
    expect(readProxyEnv({ HTTPS_PROXY: 'proxy.corp:8080' })?.httpsProxy?.href).toBe('http://proxy.corp:8080/');
  });

  it('refuses what is not an http(s) proxy URL with exit 2, never echoing the value', () => {
    for (const [value, msg] of [
      ['http://user:Secr3tPass@[oops', 'HTTPS_PROXY is not a valid proxy URL'],
      [
        'socks5://user:Secr3tPass@h:1080',
        'HTTPS_PROXY uses socks5, but only http:// and https:// proxies are supported',
      ],
    ] as const) {
      let err: unknown;
      try {
        readProxyEnv({ HTTPS_PROXY: value });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(IdcliError);
      expect((err as IdcliError).exitCode).toBe(2);
      expect((err as IdcliError).code).toBe('PROXY_URL_INVALID');
      expect((err as IdcliError).message).toBe(msg);
      expect(`${(err as IdcliError).message} ${(err as IdcliError).hint}`).not.toContain('Secr3tPass');
    }
  });

  it('shows a proxy without its credentials', () => {
    const p = readProxyEnv({ HTTPS_PROXY: 'http://alice:pa%40ss@proxy.corp:8080/' });
    expect(showProxy(p!.httpsProxy!)).toBe('http://proxy.corp:8080');
  });
});

describe('proxyFor: NO_PROXY matching (the rules of undici EnvHttpProxyAgent)', () => {
  const p = (noProxy: string) =>
    readProxyEnv({ HTTPS_PROXY: 'http://p:1', HTTP_PROXY: 'http://p:1', NO_PROXY: noProxy })!;
  const cases: Array<[string, string, boolean]> = [
    ['', 'https://id.example.com/', true],
    ['example.com', 'https://id.example.com/', false],
    ['example.com', 'https://example.com/', false],
    ['.example.com', 'https://id.example.com/', false],
    ['*.example.com', 'https://id.example.com/', false],
    ['example.com', 'https://notexample.com/', true],
    ['127.0.0.1', 'http://127.0.0.1:8080/', false],
    ['127.0.0.1:9000', 'http://127.0.0.1:8080/', true],
    ['127.0.0.1:8080', 'http://127.0.0.1:8080/', false],
    ['id.example.com:443', 'https://id.example.com/', false],
    ['a.com, b.com  c.com', 'https://c.com/', false],
    ['*', 'https://anything.example/', false],
    ['EXAMPLE.com', 'https://Id.Example.COM/', false],
    ['[::1]', 'http://[::1]:8080/', false],
    ['::1', 'http://[::1]:8080/', false],
    ['localhost,127.0.0.1,::1', 'https://[::1]/', false],
    ['[::1]:8080', 'http://[::1]:8080/', false],
    ['[::1]:9000', 'http://[::1]:8080/', true],
    ['::2', 'http://[::1]:8080/', true],
    ['0:0:0:0:0:0:0:1', 'http://[::1]:8080/', false],
  ];
  it.each(cases)('NO_PROXY=%j, %s → proxied: %s', (noProxy, target, proxied) => {
    expect(proxyFor(u(target), p(noProxy)) !== undefined).toBe(proxied);
  });
});

describe('NO_PROXY with IPv6 addresses, bare or bracketed, as curl reads them', () => {
  const mixedCase = (address: string) =>
    fc
      .array(fc.boolean(), { minLength: address.length, maxLength: address.length })
      .map((upper) => [...address].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));
  const others = fc.array(fc.oneof(fc.domain(), fc.ipV4(), fc.ipV6()), { maxLength: 4 });
  const separator = fc.constantFrom(',', ' ', ', ', '\t');
  const listWith = (entry: string, before: string[], after: string[], sep: string) =>
    [...before, entry, ...after].join(sep);
  const target = (address: string, port: number, scheme: string) => u(`${scheme}://[${address}]:${port}/`);
  const proxy = (noProxy: string) =>
    readProxyEnv({ HTTPS_PROXY: 'http://p:1', HTTP_PROXY: 'http://p:1', NO_PROXY: noProxy })!;

  it('for any address and list, the bare and the bracketed entry give the same answer: direct', () => {
    fc.assert(
      fc.property(
        fc.ipV6().chain((a) => fc.tuple(fc.constant(a), mixedCase(a))),
        others,
        others,
        separator,
        fc.integer({ min: 1, max: 65535 }),
        fc.constantFrom('http', 'https'),
        ([address, written], before, after, sep, port, scheme) => {
          const to = target(address, port, scheme);
          const bare = proxyFor(to, proxy(listWith(written, before, after, sep)));
          const bracketed = proxyFor(to, proxy(listWith(`[${written}]`, before, after, sep)));
          const withPort = proxyFor(to, proxy(listWith(`[${written}]:${port}`, before, after, sep)));
          expect([bare, bracketed, withPort]).toEqual([undefined, undefined, undefined]);
        },
      ),
    );
  });

  it('for any two addresses, the bare and the bracketed entry of one agree on the other', () => {
    fc.assert(
      fc.property(fc.ipV6(), fc.ipV6(), others, separator, (address, listed, before, sep) => {
        const to = target(address, 443, 'https');
        const bare = proxyFor(to, proxy(listWith(listed, before, [], sep)));
        const bracketed = proxyFor(to, proxy(listWith(`[${listed}]`, before, [], sep)));
        expect(bare).toEqual(bracketed);
      }),
    );
  });

  it('hands undici every address bracketed in its shortest form, and other entries as they were', () => {
    expect(noProxyForUndici('localhost, 127.0.0.1 ::1')).toBe('localhost,127.0.0.1,[::1]');
    expect(noProxyForUndici('[0:0::1]:8080,*.corp.example,host:3128')).toBe('[::1]:8080,*.corp.example,host:3128');
    expect(noProxyForUndici(' * ')).toBe('*');
  });
});

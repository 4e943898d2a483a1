/** git's credential helper protocol as idcli reads it (git-credential(1), "INPUT/OUTPUT FORMAT"). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { onTokenOrigin } from '../../../src/apiclient/target.js';
import { answer, parseAttributes, queryUrl } from '../../../src/commands/credential/git-attributes.js';

const settings = { baseUrl: 'https://id.example.com', apiBaseUrl: 'https://api.example.com:8443/v1' };
/** Whether `get` answers for these attribute lines. */
const answers = (text: string) => {
  const url = queryUrl(parseAttributes(text));
  return url !== undefined && onTokenOrigin(url, settings);
};

/** Every scheme and host the lines name, as git reads them (credential_from_url) and as WHATWG does. */
function readings(lines: string[]): { protocols: Set<string>; hosts: Set<string> } {
  const protocols = new Set<string>();
  const hosts = new Set<string>();
  const whatwg = (text: string) => (URL.canParse(text) ? new URL(text) : undefined);
  for (const line of lines) {
    const eq = line.indexOf('=');
    const [key, value] = [line.slice(0, eq), line.slice(eq + 1)];
    if (key === 'protocol') protocols.add(value);
    if (key === 'host') {
      hosts.add(value);
      const read = whatwg(`http://${value}/`);
      if (read) hosts.add(read.host);
    }
    if (key !== 'url') continue;
    const end = value.indexOf('://');
    if (end >= 0) {
      const rest = value.slice(end + 3);
      const slash = rest.search(/[/?#]|$/);
      const at = rest.indexOf('@');
      protocols.add(value.slice(0, end));
      const host = rest.slice(at >= 0 && at < slash ? at + 1 : 0, slash);
      hosts.add(host);
      try {
        hosts.add(decodeURIComponent(host));
      } catch {
        hosts.add(`${host}%`);
      }
    }
    const read = whatwg(value);
    if (read) {
      protocols.add(read.protocol.slice(0, -1));
      hosts.add(read.host);
    }
  }
  return { protocols, hosts };
}

describe('parseAttributes', () => {
  it('reads protocol, host with its port, and path, up to the empty line', () => {
    expect(
      parseAttributes('protocol=https\nhost=api.example.com:8443\npath=org/repo.git\n\nhost=evil.example\n'),
    ).toEqual({ protocol: 'https', host: 'api.example.com:8443', path: 'org/repo.git', authtype: false });
  });

  it('ends at the end of input without an empty line', () => {
    expect(parseAttributes('protocol=https\nhost=id.example.com')).toMatchObject({ host: 'id.example.com' });
  });

  it('reads lines ended by CRLF', () => {
    expect(parseAttributes('protocol=https\r\nhost=id.example.com\r\n\r\nhost=evil.example\r\n')).toMatchObject({
      protocol: 'https',
      host: 'id.example.com',
    });
  });

  it('an empty line only, or nothing, is an empty query', () => {
    expect(parseAttributes('\n')).toEqual({ authtype: false });
    expect(parseAttributes('\nprotocol=https\nhost=id.example.com\n')).toEqual({ authtype: false });
    expect(parseAttributes('')).toEqual({ authtype: false });
  });

  it('skips unknown attributes and lines without a key', () => {
    expect(
      parseAttributes('wwwauth[]=Basic realm="x"\nprotocol=https\nnonsense\n=x\nfuture=1\nhost=id.example.com\n'),
    ).toEqual({ protocol: 'https', host: 'id.example.com', authtype: false });
  });

  it('reads url= as its parts, later attributes overriding them', () => {
    expect(parseAttributes('url=https://api.example.com:8443/org/repo.git\n')).toEqual({
      protocol: 'https',
      host: 'api.example.com:8443',
      path: 'org/repo.git',
      authtype: false,
    });
    expect(parseAttributes('url=https://id.example.com/\nhost=evil.example\n').host).toBe('evil.example');
    expect(parseAttributes('host=id.example.com\nurl=not a url\n').host).toBeUndefined();
  });

  it('keeps the token git says the server refused, and the authtype capability', () => {
    expect(parseAttributes('capability[]=authtype\npassword=tok\n')).toMatchObject({ authtype: true, rejected: 'tok' });
    expect(parseAttributes('capability[]=state\ncredential=tok2\n')).toMatchObject({
      authtype: false,
      rejected: 'tok2',
    });
  });
});

describe('the origins get answers for', () => {
  it('the host of base-url and of api-base-url, on their ports, default or explicit', () => {
    expect(answers('protocol=https\nhost=id.example.com\n')).toBe(true);
    expect(answers('protocol=https\nhost=id.example.com:443\n')).toBe(true);
    expect(answers('protocol=https\nhost=ID.Example.COM\n')).toBe(true);
    expect(answers('protocol=https\nhost=api.example.com:8443\n')).toBe(true);
    expect(answers('url=https://api.example.com:8443/x.git\n')).toBe(true);
  });

  it('no other scheme, host or port', () => {
    expect(answers('protocol=http\nhost=id.example.com\n')).toBe(false);
    expect(answers('protocol=http\nhost=id.example.com:443\n')).toBe(false);
    expect(answers('protocol=https\nhost=id.example.com:80\n')).toBe(false);
    expect(answers('protocol=https\nhost=api.example.com\n')).toBe(false);
    expect(answers('protocol=ssh\nhost=id.example.com\n')).toBe(false);
    expect(answers('protocol=https\nhost=id.example.com.evil.example\n')).toBe(false);
    expect(answers('protocol=https\n')).toBe(false);
    expect(answers('host=id.example.com\n')).toBe(false);
  });

  it('no host that would parse as another one', () => {
    for (const host of ['evil.example@id.example.com', 'id.example.com@evil.example', 'evil.example/id.example.com'])
      expect(answers(`protocol=https\nhost=${host}\n`), host).toBe(false);
    expect(answers('protocol=https\nhost=evil.example\\id.example.com\n')).toBe(false);
    expect(answers('protocol=https\nhost=id.example.com:443:443\n')).toBe(false);
  });

  it('no url= that git and WHATWG could read apart, nor one beside another origin', () => {
    for (const input of [
      'url=https://id.example.com\\@evil.example/\n',
      'url=https://evil.example@id.example.com/\n',
      'url=https://id.example.com%40evil.example/\n',
      'url= https://id.example.com/\n',
      'url=https://id.example.com\t/\n',
      'protocol=https\nhost=evil.example\nurl=https://id.example.com/\n',
      'url=https://id.example.com/\nprotocol=http\n',
      'url=https://evil.example/\nurl=https://id.example.com/\n',
      'host=evil.example\nhost=id.example.com\nprotocol=https\n',
    ])
      expect(answers(input), JSON.stringify(input)).toBe(false);
    expect(answers('protocol=https\nhost=id.example.com\nurl=https://ID.example.com/org/repo.git\n')).toBe(true);
  });

  it("nothing whose host, by git's reading or WHATWG's, of any line, is not the token's origin", () => {
    const scheme = fc.constantFrom('https', 'http', 'HTTPS', ' https', 'ssh');
    const hostish = fc
      .array(
        fc.constantFrom(
          ...['id.example.com', 'api.example.com:8443', 'api.example.com', 'evil.example', 'ID.example.com'],
          ...['id.example.com:443', '127.0.0.1', '', '@', '\\', '/', '?', '#', ':', '%40', '%2f', ' ', '\t', '.'],
          ...[':443', ':8443', '[::1]'],
        ),
        { minLength: 1, maxLength: 4 },
      )
      .map((parts) => parts.join(''));
    const path = fc.constantFrom('', '/', '/org/repo.git', '/a@b', '?x', '#y', '\\x');
    const url = fc.tuple(scheme, fc.constantFrom('://', ':/', ':///'), hostish, path).map((parts) => parts.join(''));
    const line = fc.oneof(
      scheme.map((v) => `protocol=${v}`),
      hostish.map((v) => `host=${v}`),
      url.map((v) => `url=${v}`),
      fc.constantFrom('path=x', 'wwwauth[]=Basic', 'capability[]=authtype'),
    );
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 4 }), (lines) => {
        const text = `${lines.join('\n')}\n`;
        if (!answers(text)) return;
        const { protocols, hosts } = readings(lines);
        for (const p of protocols)
          for (const h of hosts) {
            const target = `${p}://${h}/`;
            expect(URL.canParse(target) && onTokenOrigin(new URL(target), settings), `${text} → ${target}`).toBe(true);
          }
      }),
      { numRuns: 5000 },
    );
  });

  it('on http on port 80 when base-url says so', () => {
    const url = queryUrl(parseAttributes('protocol=http\nhost=127.0.0.1:80\n'));
    expect(url && onTokenOrigin(url, { baseUrl: 'http://127.0.0.1' })).toBe(true);
  });
});

describe('answer', () => {
  it('a password for git without authtype, with its expiry in epoch seconds', () => {
    expect(answer({ authtype: false }, 'tok', 1_700_000_000_999)).toBe(
      'username=oauth2\npassword=tok\npassword_expiry_utc=1700000000\n',
    );
  });

  it('a Bearer credential when git announces authtype', () => {
    expect(answer({ authtype: true }, 'tok', undefined)).toBe(
      'capability[]=authtype\nauthtype=Bearer\ncredential=tok\n',
    );
  });
});

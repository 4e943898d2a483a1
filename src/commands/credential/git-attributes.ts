/**
 * git's credential helper protocol (git-credential(1)): the `key=value` lines git writes to a helper, ended by an
 * empty line or the end of input, and the answer of a helper that holds a token for the URL asked about.
 */

/** What git asks about, as far as a bearer token cares: where the request goes, and what git can take back. */
export interface CredentialQuery {
  protocol?: string;
  /** The host, with `:port` when the URL names one. */
  host?: string;
  path?: string;
  /** The token git sent and the server refused (`erase`): `password`, or `credential` with an authtype. */
  rejected?: string;
  /** git announced `capability[]=authtype` (git 2.46+): it can send `Authorization: <authtype> <credential>`. */
  authtype: boolean; /**
   * The request names its origin two ways (a `url=` beside another `url=`, `protocol=` or `host=` that says otherwise),
   * or in a `url=` that git and WHATWG could read as different hosts: no origin is answered for.
   */
  ambiguous?: true;
}

/** The attribute lines up to the first empty one; a line ending in CR (a helper run through Windows tools) counts too. */
export function parseAttributes(text: string): CredentialQuery {
  const query: CredentialQuery = { authtype: false };
  const named = { protocol: new Set<string>(), host: new Set<string>() };
  for (const raw of text.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line === '') break;
    const eq = line.indexOf('=');
    // git itself refuses a line without `=`; a helper ignores what it does not understand.
    if (eq <= 0) continue;
    apply(query, line.slice(0, eq), line.slice(eq + 1));
    if (query.protocol !== undefined) named.protocol.add(query.protocol);
    if (query.host !== undefined) named.host.add(query.host.toLowerCase());
  }
  // git keeps the last of each, but which one a reader takes is a guess; a token goes only where all of them agree.
  if (named.protocol.size > 1 || named.host.size > 1) query.ambiguous = true;
  return query;
}

function apply(query: CredentialQuery, key: string, value: string): void {
  switch (key) {
    case 'protocol':
    case 'host':
    case 'path':
      query[key] = value;
      break;
    case 'url':
      // git reads `url=` as the parts it names, replacing what came before (credential_from_url).
      Object.assign(query, urlParts(value));
      if (!unambiguousUrl(value)) query.ambiguous = true;
      break;
    case 'password':
    case 'credential':
      query.rejected = value;
      break;
    case 'capability[]':
      if (value === 'authtype') query.authtype = true;
      break;
  }
}

/** A host as a token may be sent to: a name, IPv4 or [IPv6], and a port; nothing that parses into another. */
const PLAIN_HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * Whether git (its host ends at the first `/`, `?` or `#`, after the last `@` before it, percent-decoded) and WHATWG
 * (a `\\` is a `/`, spaces and tabs dropped) read the same scheme and host in `value`: no `\\`, `@`, `%`, space or
 * control character in it, and a plain host.
 */
function unambiguousUrl(value: string): boolean {
  if (/[\\@%\u0000-\u0020\u007f]/.test(value)) return false;
  const git = /^([^:/?#]+):\/\/([^/?#]*)/.exec(value);
  if (!git || !PLAIN_HOST.test(git[2]!) || !URL.canParse(value)) return false;
  const plain = `${git[1]!}://${git[2]!}/`;
  if (!URL.canParse(plain)) return false;
  const [whatwg, gits] = [new URL(value), new URL(plain)];
  return whatwg.protocol === `${git[1]!}:` && whatwg.host === gits.host;
}

function urlParts(value: string): Pick<CredentialQuery, 'protocol' | 'host' | 'path'> {
  if (!URL.canParse(value)) return { protocol: undefined, host: undefined, path: undefined };
  const url = new URL(value);
  const path = url.pathname.replace(/^\//, '');
  return { protocol: url.protocol.replace(/:$/, ''), host: url.host, path: path === '' ? undefined : path };
}

/**
 * The origin git asks about, or undefined when it names none a token could go to: an http(s) scheme and a host that
 * is a host (name, IPv4 or [IPv6], and a port), never one that would parse into another (`a@b`, `a/b`, `a\\b`), and
 * nothing that names another origin beside it.
 */
export function queryUrl(query: CredentialQuery): URL | undefined {
  const { protocol, host } = query;
  if (query.ambiguous || (protocol !== 'https' && protocol !== 'http') || host === undefined) return undefined;
  if (!PLAIN_HOST.test(host)) return undefined;
  const text = `${protocol}://${host}/`;
  return URL.canParse(text) ? new URL(text) : undefined;
}

/** What `get` prints for a token; `expiresAt` in epoch ms. */
export function answer(query: CredentialQuery, token: string, expiresAt: number | undefined): string {
  const lines = query.authtype
    ? ['capability[]=authtype', 'authtype=Bearer', `credential=${token}`]
    : ['username=oauth2', `password=${token}`];
  if (expiresAt !== undefined) lines.push(`password_expiry_utc=${Math.floor(expiresAt / 1000)}`);
  return `${lines.join('\n')}\n`;
}

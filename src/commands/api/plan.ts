/** `idcli api` flags → the request to send, checked before anything is read or sent (a usage error, exit 2). */
import { usageError } from '../../errors.js';
import { requestHeaders } from '../../apiclient/client.js';
import { targetUrl } from '../../apiclient/target.js';
import { quoted } from '../../printable.js';

/** The flags a plan is made of, as `api`'s option table reads them (command.ts hands its options in). */
export interface ApiFlags {
  target: string;
  method: string | undefined;
  header: readonly string[];
  field: readonly string[];
  input: string | undefined;
}

export type BodySource =
  { kind: 'none' } | { kind: 'text'; text: string } | { kind: 'file'; /** `-` for stdin. */ path: string };

export interface ApiPlan {
  method: string;
  url: string;
  /** Lower-case names, the client's defaults under the user's own; never `authorization`, added per attempt. */
  headers: Record<string, string>;
  body: BodySource;
}

// RFC 9110 §5.6.2 token: what a method or a field name may consist of.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// A field value: no CR, LF or other controls but HTAB (RFC 9110 §5.5), which would let a value smuggle in a field.
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
// Refused (RFC 9110): CONNECT makes a tunnel (§9.3.6); TRACE echoes the request and must carry no credentials (§9.3.8).
const REFUSED_METHODS: ReadonlyMap<string, string> = new Map([
  ['CONNECT', 'it opens a tunnel to another host instead of requesting a resource'],
  ['TRACE', 'the server would echo the request back, access token included'],
]);
/** Framing and connection fields the HTTP client writes itself; a second copy would make the message ambiguous. */
const OWN_FIELDS = new Set('host content-length transfer-encoding connection keep-alive upgrade te trailer'.split(' '));

export function planRequest(flags: ApiFlags, apiBaseUrl: string): ApiPlan {
  return { ...checkFlags(flags), url: targetUrl(flags.target, apiBaseUrl) };
}

/** Every usage error the flags alone can give (`api`'s check), before any setting is read. */
export function checkFlags(flags: ApiFlags): Omit<ApiPlan, 'url'> {
  if (flags.field.length > 0 && flags.input !== undefined)
    throw usageError(
      'USAGE_CONFLICTING_OPTIONS',
      '-f/--field and --input cannot be used together',
      'send either fields or a file as the body',
    );
  if (flags.input === '') throw usageError('USAGE_OPTION_VALUE_MISSING', '--input needs a file name, or - for stdin');
  if (flags.target.trim() === '') throw usageError('TARGET_MISSING', 'api needs a path or URL, e.g. idcli api /v1/me');

  const body: BodySource =
    flags.input !== undefined
      ? { kind: 'file', path: flags.input }
      : flags.field.length > 0
        ? { kind: 'text', text: fieldsJson(flags.field) }
        : { kind: 'none' };

  let method = body.kind === 'none' ? 'GET' : 'POST';
  if (flags.method !== undefined) {
    if (!TOKEN.test(flags.method))
      throw usageError('API_METHOD_INVALID', `-X/--method: ${quoted(flags.method)} is not an HTTP method`);
    // Methods are case-sensitive on the wire and every registered one is upper case (RFC 9110 §9.1).
    method = flags.method.toUpperCase();
    const refused = REFUSED_METHODS.get(method);
    if (refused !== undefined)
      throw usageError(
        'API_METHOD_REFUSED',
        `-X/--method ${method} is not supported: ${refused}`,
        'use GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS',
      );
  }

  const contentType: Record<string, string> = body.kind === 'none' ? {} : { 'content-type': 'application/json' };
  return { method, headers: requestHeaders({ ...contentType, ...parseHeaders(flags.header) }), body };
}

/** -f key=value pairs as a JSON object of strings, in the order given. */
export function fieldsJson(fields: readonly string[]): string {
  const out = new Map<string, string>();
  for (const field of fields) {
    const eq = field.indexOf('=');
    if (eq <= 0) throw usageError('API_FIELD_INVALID', `-f/--field takes key=value, not ${quoted(field)}`);
    const key = field.slice(0, eq);
    if (out.has(key)) throw usageError('API_FIELD_REPEATED', `-f/--field: ${quoted(key)} is given twice`);
    out.set(key, field.slice(eq + 1));
  }
  // Object.fromEntries defines own properties, so even a key like __proto__ stays a plain field.
  return JSON.stringify(Object.fromEntries(out));
}

/** -H values → lower-case names; a field given twice is combined with ", " (RFC 9110 §5.3). */
export function parseHeaders(lines: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = (colon === -1 ? line : line.slice(0, colon)).trim();
    if (colon === -1 || !TOKEN.test(name))
      throw usageError('API_HEADER_INVALID', `-H/--header takes 'Name: value', not ${quoted(line)}`);
    const key = name.toLowerCase();
    if (key === 'authorization')
      throw usageError(
        'API_HEADER_REFUSED',
        'an Authorization header of your own is refused: idcli api sends the access token itself',
        'drop -H Authorization; to call a service with another credential, use curl',
      );
    if (OWN_FIELDS.has(key)) throw usageError('API_HEADER_REFUSED', `-H/--header: idcli sets ${name} itself`);
    const value = line.slice(colon + 1).trim();
    if (BAD_VALUE.test(value))
      throw usageError('API_HEADER_INVALID', `-H/--header: the value of ${name} has a control character`);
    out[key] = key in out ? `${out[key]}, ${value}` : value;
  }
  return out;
}

/** The stored credential record: ONE value, so a refresh token and its verifier (Serial PKCE) are never saved apart. */
import { ExitCode, IdcliError } from '../errors.js';
import { isTokenText, MAX_LIFETIME_SEC } from '../token-rules.js';
import { assertString, isJsonObject } from '../shape.js';

export interface CredentialKey {
  baseUrl: string;
  clientId: string;
  profile: string;
}

export interface CredentialRecord {
  version: 1;
  refreshToken?: string;
  /** Verifier of the challenge sent with the LAST token request (Serial PKCE): the next refresh proves it. */
  codeVerifier?: string;
  accessToken?: string;
  tokenType?: string;
  expiresAt?: number; // epoch ms
  idToken?: string;
  scope?: string;
  updatedAt: number; // epoch ms
  /** +1 on every write (set by the writer), so a refresher can see that another process changed the record. */
  generation: number;
  /** The store's own revision of the record, set on read where it keeps one (etcd's mod_revision); never stored. */
  revision?: number;
}

/** Stored data that cannot be trusted (exit 3): signing in again overwrites it. The reason never names values. */
export class CredentialRecordError extends IdcliError {
  readonly reason: string;

  constructor(reason: string, where?: string) {
    const message = `stored credentials${where ? ` in ${where}` : ''} are unreadable (${reason})`;
    super('CREDENTIALS_UNREADABLE', message, ExitCode.AUTH, { hint: 'run `idcli login` to sign in again' });
    this.name = 'CredentialRecordError';
    this.reason = reason;
  }

  /** The same failure, told with the store it came from. */
  at(where: string): CredentialRecordError {
    return new CredentialRecordError(this.reason, where);
  }
}

/** What `decode` returns; the CredentialRecordError it throws is told with the store it came from, `where`. */
export function recordFrom(where: string, decode: () => CredentialRecord): CredentialRecord {
  try {
    return decode();
  } catch (err) {
    throw err instanceof CredentialRecordError ? err.at(where) : err;
  }
}

/** Stable across releases: it names keychain entries and (hashed) credential files, so changing it logs users out. */
export function accountName(key: CredentialKey): string {
  return `${key.profile}|${key.clientId}|${key.baseUrl}`;
}

const STRING_FIELDS = ['refreshToken', 'codeVerifier', 'accessToken', 'tokenType', 'idToken', 'scope'] as const;
const TOKEN_FIELDS = ['refreshToken', 'codeVerifier', 'accessToken'] as const;

export function encodeRecord(r: CredentialRecord): string {
  return JSON.stringify(normalise(r));
}

export function decodeRecord(text: string): CredentialRecord {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new CredentialRecordError('not JSON');
  }
  return validateRecord(data);
}

/** Shape check of a parsed record; unknown fields are dropped so a newer writer's extras cannot leak through. */
export function validateRecord(data: unknown): CredentialRecord {
  if (!isJsonObject(data)) throw new CredentialRecordError('not an object');
  const obj = data;
  if (obj.version !== 1) {
    const { version } = obj;
    const newer = typeof version === 'number' && version > 1;
    throw new CredentialRecordError(
      newer ? `format version ${version} is from a newer idcli` : 'unknown format version',
    );
  }
  for (const field of STRING_FIELDS) {
    if (obj[field] !== undefined)
      assertString(obj[field], field, (what) => new CredentialRecordError(`${what} is not a string`));
  }
  // Tokens go into headers and request bodies as they are: visible ASCII only, as the token client demands of
  // what it receives. A damaged record is refused here, not sent in a request that can only fail.
  for (const field of TOKEN_FIELDS) {
    const value = obj[field];
    if (typeof value === 'string' && !isTokenText(value))
      throw new CredentialRecordError(`${field} holds control characters or other characters no token has`);
  }
  if (obj.expiresAt !== undefined && !isFiniteNumber(obj.expiresAt))
    throw new CredentialRecordError('expiresAt is not a number');
  if (!isFiniteNumber(obj.updatedAt)) throw new CredentialRecordError('updatedAt is missing');
  if (typeof obj.generation !== 'number' || !Number.isSafeInteger(obj.generation) || obj.generation < 0) {
    throw new CredentialRecordError('generation is not a non-negative integer');
  }
  const record = normalise({ ...obj, updatedAt: obj.updatedAt, generation: obj.generation });
  if (record.expiresAt !== undefined) record.expiresAt = believedExpiry(record.expiresAt, record.updatedAt);
  return record;
}

/** The latest time a Date can hold (ECMA-262 §21.4.1.22); `status` and `token --json` show the expiry as one. */
const MAX_TIME_MS = 8.64e15;

/** An expiry no Date can hold (an older idcli stored `expires_in` 1e300) reads as the longest lifetime believed. */
function believedExpiry(expiresAt: number, updatedAt: number): number {
  if (Math.abs(expiresAt) <= MAX_TIME_MS) return expiresAt;
  if (expiresAt < 0) return 0;
  return Math.max(0, Math.min(updatedAt + MAX_LIFETIME_SEC * 1000, MAX_TIME_MS));
}
function isFiniteNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

type Unchecked = { [K in keyof CredentialRecord]?: unknown };

/** Known fields only, in a fixed order, absent ones omitted: equal records encode to equal bytes. */
function normalise(r: Unchecked & Pick<CredentialRecord, 'updatedAt' | 'generation'>): CredentialRecord {
  const out: CredentialRecord = { version: 1, updatedAt: r.updatedAt, generation: r.generation };
  for (const field of STRING_FIELDS) {
    const value = r[field];
    if (typeof value === 'string') out[field] = value;
  }
  if (typeof r.expiresAt === 'number') out.expiresAt = r.expiresAt;
  return out;
}

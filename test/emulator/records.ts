// Realistic user records: uuids, names (some beyond ASCII), emails, timestamps, a nested address, arrays and
// hash-like values, so that compressed sizes are those of real data rather than of a repeated template. Seeded:
// record i depends only on the seed and i, so every run and every collection size serves the same bytes.

const GIVEN = (
  'Ada Alan Amara Ana Andrés Aoife Arjun Astrid Ben Bjørn Carlos Chen Chloé Daniel Dmitri Elena Emeka ' +
  'Emma Fatima François Grace Hana Hiroshi Ines Ivan Jamal Jana João Julia Kai Karin Kwame Lars Leila ' +
  'Liam Lucía Mateo Maya Mei Mohammed Nadia Nikolai Noah Olga Oren Priya Rafael Ravi Sakura Sara Sofía ' +
  'Søren Tariq Thomas Uma Valentina Wei Yara Yusuf Zoë'
).split(' ');
const FAMILY = (
  'Abebe Andersen Becker Brown Chatterjee Costa Dubois Dvořák Eriksson Fernández Fischer García ' +
  'Gonzalez Hansen Haddad Ivanova Jensen Johnson Kim Kowalski Kumar Larsen Li López Martin Müller ' +
  "Nakamura Nguyen O'Brien Okafor Olsen Patel Petrov Popescu Rossi Santos Schmidt Silva Singh Smith " +
  'Suzuki Tanaka Taylor Novák Wang Weber Williams Yilmaz Zhang Żukowski'
).split(' ');
const DOMAINS = ['example.com', 'example.org', 'example.net', 'mail.example', 'corp.example', 'inbox.example'];
const PLACES: ReadonlyArray<readonly [city: string, country: string, locale: string]> = [
  ['Lisbon', 'PT', 'pt-PT'],
  ['Berlin', 'DE', 'de-DE'],
  ['Paris', 'FR', 'fr-FR'],
  ['Madrid', 'ES', 'es-ES'],
  ['London', 'GB', 'en-GB'],
  ['New York', 'US', 'en-US'],
  ['São Paulo', 'BR', 'pt-BR'],
  ['Tokyo', 'JP', 'ja-JP'],
  ['Lagos', 'NG', 'en-NG'],
  ['Mumbai', 'IN', 'hi-IN'],
  ['Warszawa', 'PL', 'pl-PL'],
  ['Toronto', 'CA', 'en-CA'],
];
const ROLES = ['member', 'admin', 'billing', 'support', 'auditor', 'developer', 'viewer'];
const STATUSES = ['active', 'active', 'active', 'active', 'invited', 'suspended'];
const MFA = ['totp', 'webauthn', 'sms'];
/** Group ids come from a pool, as in a real directory: few groups, many members. */
const GROUPS = Array.from({ length: 48 }, (_, i) => `grp_${((i + 1) * 0x9e3779b1).toString(16).slice(-8)}`);
const SINCE = Date.UTC(2019, 0, 1);
const SPAN = Date.UTC(2025, 0, 1) - SINCE;

/** mulberry32: a small, fast, well-mixed 32-bit generator; quality enough for test data, never for secrets. */
export function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

class Draw {
  constructor(private readonly next: () => number) {}
  int(n: number): number {
    return this.next() % n;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)] as T;
  }
  chars(alphabet: string, n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[this.int(alphabet.length)];
    return s;
  }
  hex(n: number): string {
    return this.chars('0123456789abcdef', n);
  }
  uuid(): string {
    const variant = '89ab'[this.int(4)] as string;
    return `${this.hex(8)}-${this.hex(4)}-4${this.hex(3)}-${variant}${this.hex(3)}-${this.hex(12)}`;
  }
  time(from: number, span: number): number {
    return from + (this.next() % Math.max(1, Math.floor(span / 1000))) * 1000 + this.int(1000);
  }
}

function ascii(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase();
}

function record(seed: number, i: number): string {
  const d = new Draw(generator(Math.imul(seed, 0x9e3779b1) ^ Math.imul(i + 1, 0x85ebca6b)));
  const given = d.pick(GIVEN);
  const family = d.pick(FAMILY);
  const [city, country, locale] = d.pick(PLACES);
  const created = d.time(SINCE, SPAN);
  const login = d.time(created, SINCE + SPAN - created);
  const username = `${ascii(given)}.${ascii(family)}${d.int(100)}`;
  const roles = [d.pick(ROLES)];
  if (d.int(3) === 0) roles.push(d.pick(ROLES.filter((r) => r !== roles[0])));
  const mfa = d.int(2) === 0;
  const value = {
    id: d.uuid(),
    username,
    name: { given, family },
    email: `${username}@${d.pick(DOMAINS)}`,
    emailVerified: d.int(5) !== 0,
    status: d.pick(STATUSES),
    locale,
    createdAt: new Date(created).toISOString(),
    lastLoginAt: new Date(login).toISOString(),
    roles,
    groups: Array.from({ length: 1 + d.int(2) }, () => d.pick(GROUPS)),
    address: { city, postalCode: String(10000 + d.int(90000)), country },
    mfa: mfa ? [d.pick(MFA)] : [],
    avatarHash: d.hex(32),
  };
  return JSON.stringify(value);
}

/** Records made so far per seed: record i depends only on the seed and i, and every emulator serves the defaults. */
const made = new Map<number, string[]>();

/** `count` records as raw JSON text, the same for the same seed. */
export function generateRecords(count: number, seed = 1): string[] {
  let records = made.get(seed);
  if (!records) made.set(seed, (records = []));
  for (let i = records.length; i < count; i++) records.push(record(seed, i));
  return records.slice(0, count);
}

/**
 * Items for pages of `perPage` that grow: `small` pages of 1 KB, then each page 4 times the one before up to `top`
 * bytes, then `after` pages of `top` bytes. The items of a page are one string, so a large collection costs the
 * emulator its packed bytes only.
 */
export function growingItems(perPage: number, top: number, small = 300, after = 12): string[] {
  const items: string[] = [];
  const page = (bytes: number) => {
    const item = `{"pad":"${'x'.repeat(Math.max(1, Math.floor(bytes / perPage) - 10))}"}`;
    for (let i = 0; i < perPage; i++) items.push(item);
  };
  for (let i = 0; i < small; i++) page(1024);
  for (let bytes = 4096; bytes < top; bytes *= 4) page(bytes);
  for (let i = 0; i < after; i++) page(top);
  return items;
}

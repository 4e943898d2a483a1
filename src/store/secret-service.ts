/**
 * The Secret Service spoken to directly over D-Bus, where the keychain library's own calls could block or prompt
 * (see keyring-client.ts). Reference: the Secret Service API (https://specifications.freedesktop.org/secret-service-spec/latest/).
 */
import { type BusOptions, type Outcome, type SessionBus, type Target, Unusable, withSessionBus } from './dbus.js';

/**
 * `ready` carries `secret` when the probe was asked to read an account: its bytes, null when there is no such
 * item, or 'ambiguous' when several items match (the library's lookup then decides, as it does on writes).
 * `writable` says whether the checks that writing needs were made (see probeSecretService).
 */
export type ProbeResult =
  | { status: 'ready'; secret?: SecretLookup; writable: boolean }
  | { status: 'unavailable'; reason: string }
  | { status: 'unchecked' };
export type SecretLookup = Buffer | null | 'ambiguous';

export interface SecretServiceOptions extends BusOptions {
  /** The keychain service whose items are asked about (the library's `service` attribute). */
  service: string;
}

export interface ProbeOptions extends SecretServiceOptions {
  /** An account whose secret to read in the same conversation, sparing a second connection. */
  read?: string;
}

const SECRETS: Target = {
  destination: 'org.freedesktop.secrets',
  path: '/org/freedesktop/secrets',
  interface: 'org.freedesktop.Secret.Service',
  label: 'Secret Service',
};
const LOCKED = 'the keyring is locked (unlock it, e.g. by signing in to the desktop)';

/**
 * Whether the Secret Service on the session bus in `env` can be used without the library blocking or prompting:
 * `ready`; `unavailable` with a reason for the user; or `unchecked` when the bus is reached in a way not spoken
 * here (another transport, another authentication mechanism), which leaves the verdict to the library.
 *
 * Asked to read an account it finds, unlocked, the probe is done: the keychain holds the record and can give it
 * (`writable` false: the first write makes the checks below). Otherwise it goes on to what a write needs.
 */
export async function probeSecretService(opts: ProbeOptions): Promise<ProbeResult> {
  const outcome = await converse(opts, async (bus) => {
    if (opts.read !== undefined) {
      const secret = await lookUp(bus, opts.service, opts.read);
      if (secret !== null) return { secret, writable: false };
    }
    await checkWritable(bus, opts.service);
    return { secret: opts.read === undefined ? undefined : null, writable: true };
  });
  if (outcome.status !== 'done') return unfinished(outcome, opts.timeoutMs);
  const { secret, writable } = outcome.value;
  return secret === undefined ? { status: 'ready', writable } : { status: 'ready', secret, writable };
}

/**
 * A locked item of `service` would make the library Unlock it through a prompt; no default collection (Service.ReadAlias
 * → "/"), or a locked one, would make the first write prompt to create or unlock it. The search and the alias go
 * out before either reply.
 */
async function checkWritable(bus: SessionBus, service: string): Promise<void> {
  const search = searchItems(bus, { service });
  const alias = bus.call(SECRETS, 'ReadAlias', 's', (m) => m.string('default'));
  if ((await search).locked.length > 0) throw new Unusable(LOCKED);
  const collection = (await alias).string();
  if (collection === '/') throw new Unusable('the keyring has no default collection');
  // BOOLEAN is marshalled as a UINT32 0 or 1.
  const locked = await bus.getProperty({ ...SECRETS, path: collection }, 'org.freedesktop.Secret.Collection', 'Locked');
  if (locked.signature() !== 'b') throw new Unusable('the Secret Service answered an unexpected Locked property');
  if (locked.u32() !== 0) throw new Unusable(LOCKED);
}

/**
 * The secret of `service`'s item for `account`, read directly from the Secret Service (see probeSecretService
 * for when that is safe): `done` with the lookup's result, else why not.
 */
export async function readSecretServiceSecret(
  opts: SecretServiceOptions & { account: string },
): Promise<{ status: 'done'; secret: SecretLookup } | ProbeResult> {
  const outcome = await converse(opts, (bus) => lookUp(bus, opts.service, opts.account));
  return outcome.status === 'done' ? { status: 'done', secret: outcome.value } : unfinished(outcome, opts.timeoutMs);
}

/**
 * One conversation with the Secret Service under the timeout, opened by {@link introduce}. A service that answers
 * a well-formed call with an error (UnknownMethod, say) is alive and answering, so the conversation is held once
 * more before the user is told the keychain is unavailable.
 */
async function converse<T>(opts: BusOptions, talk: (bus: SessionBus) => Promise<T>): Promise<Outcome<T>> {
  const introduced = async (bus: SessionBus): Promise<T> => {
    await introduce(bus);
    return talk(bus);
  };
  const first = await withSessionBus(opts, introduced);
  return first.status === 'unavailable' && first.serviceError !== undefined ? withSessionBus(opts, introduced) : first;
}

/**
 * The first call to the Secret Service on a connection, alone and awaited: Properties.Get of the service's
 * Collections, which gnome-keyring answers without knowing the caller. gnome-keyring records each new caller from
 * a callback it schedules for the caller's first message, and on a busy daemon that callback can run after the
 * message itself is handled. A first call that needs the record is then answered with UnknownMethod (SearchItems),
 * with a wrong "/" (ReadAlias), or brings the daemon down (OpenSession aborts it in g_variant_new). Once the
 * answer to this call is back, the record was scheduled before anything sent next, and runs first.
 */
async function introduce(bus: SessionBus): Promise<void> {
  await bus.getProperty(SECRETS, SECRETS.interface, 'Collections');
}

/**
 * Sends Service.SearchItems for the account's item (the library's attributes: service, username) and
 * Service.OpenSession at once, then asks the item for its secret (Item.GetSecret).
 * The session is "plain": the secret crosses this user's own session bus unencrypted, as libsecret's does
 * when asked; the key exchange of an encrypted session keeps it from no one who could watch that bus.
 */
async function lookUp(bus: SessionBus, service: string, account: string): Promise<SecretLookup> {
  const search = searchItems(bus, { service, username: account });
  const session = bus.call(SECRETS, 'OpenSession', 'sv', (m) => {
    m.string('plain');
    m.variantString('');
  });
  const { unlocked, locked } = await search;
  if (locked.length > 0) throw new Unusable(LOCKED);
  if (unlocked.length > 1) return 'ambiguous';
  const opened = await session;
  opened.skipVariant(); // the algorithm's output: empty for "plain"
  const sessionPath = opened.string();
  if (unlocked.length === 0) return null;
  const reply = await bus.call(
    { ...SECRETS, path: unlocked[0]!, interface: 'org.freedesktop.Secret.Item' },
    'GetSecret',
    'o',
    (m) => m.string(sessionPath),
  );
  // Secret: STRUCT(o session, ay parameters, ay value, s content_type).
  reply.pad(8);
  reply.string();
  reply.byteArray();
  return reply.byteArray();
}

/** Names of the accounts stored under `service`, from the items' attributes (service, username: see the library). */
export async function listSecretServiceAccounts(opts: SecretServiceOptions): Promise<string[] | ProbeResult> {
  const outcome = await converse(opts, async (bus) => {
    const { unlocked, locked } = await searchItems(bus, { service: opts.service });
    const paths = [...unlocked, ...locked];
    const attributes = await Promise.all(
      paths.map((path) => bus.getProperty({ ...SECRETS, path }, 'org.freedesktop.Secret.Item', 'Attributes')),
    );
    const accounts: string[] = [];
    for (const value of attributes) {
      const username = value.signature() === 'a{ss}' ? value.stringDict().get('username') : undefined;
      if (username !== undefined) accounts.push(username);
    }
    return accounts;
  });
  return outcome.status === 'done' ? outcome.value : unfinished(outcome, opts.timeoutMs);
}

/** The user-facing wording of a keychain timeout, shared with the library calls' own timeout. */
export function keychainTimeoutReason(timeoutMs: number): string {
  return `keychain did not answer within ${Number((timeoutMs / 1000).toFixed(3))} s`;
}

/**
 * Service.SearchItems(a{ss} attributes) → (ao unlocked, ao locked): the items with all of `attributes`. The call
 * goes out at once (before this function first awaits), so later calls pipeline behind it.
 */
async function searchItems(
  bus: SessionBus,
  attributes: Record<string, string>,
): Promise<{ unlocked: string[]; locked: string[] }> {
  const found = await bus.call(SECRETS, 'SearchItems', 'a{ss}', (m) =>
    m.array(8, () => {
      for (const [key, value] of Object.entries(attributes)) m.dictEntry(key, value);
    }),
  );
  const unlocked = found.objectPaths();
  return { unlocked, locked: found.objectPaths() };
}

function unfinished(outcome: Exclude<Outcome<unknown>, { status: 'done' }>, timeoutMs: number): ProbeResult {
  return outcome.status === 'timed-out' ? { status: 'unavailable', reason: keychainTimeoutReason(timeoutMs) } : outcome;
}

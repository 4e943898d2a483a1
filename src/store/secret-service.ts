/**
 * The Secret Service spoken to directly over D-Bus, where the keychain library's own calls could block or prompt
 * (see keyring-client.ts). Reference: the Secret Service API (https://specifications.freedesktop.org/secret-service-spec/latest/).
 */
import { type BusOptions, type Outcome, type SessionBus, type Target, Unusable, withSessionBus } from './dbus.js';

export type ProbeResult = { status: 'ready' } | { status: 'unavailable'; reason: string } | { status: 'unchecked' };

export interface SecretServiceOptions extends BusOptions {
  /** The keychain service whose items are asked about (the library's `service` attribute). */
  service: string;
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
 */
export async function probeSecretService(opts: SecretServiceOptions): Promise<ProbeResult> {
  const first = await probeOnce(opts);
  // gnome-keyring now and then answers a well-formed call with UnknownMethod (about 1 probe in 1500 here): it is
  // alive and answering, so one more try is cheap and spares the user a spurious "keychain unavailable".
  return first.status === 'unavailable' && first.serviceError !== undefined ? probeOnce(opts) : first;
}

async function probeOnce(opts: SecretServiceOptions): Promise<ProbeResult & { serviceError?: string }> {
  const outcome = await withSessionBus(opts, async (bus) => {
    // A locked item of ours would make the library Unlock it through a prompt. Service.ReadAlias → o, "/" when
    // there is none: the first write would prompt to create a collection. Both go out before either reply.
    const search = searchItems(bus, opts.service);
    const alias = bus.call(SECRETS, 'ReadAlias', 's', (m) => m.string('default'));
    if ((await search).locked.length > 0) throw new Unusable(LOCKED);
    const collection = (await alias).string();
    if (collection === '/') throw new Unusable('the keyring has no default collection');
    // A locked default collection would prompt on the first write. BOOLEAN is marshalled as a UINT32 0 or 1.
    const locked = await bus.getProperty({ ...SECRETS, path: collection }, 'org.freedesktop.Secret.Collection', 'Locked');
    if (locked.signature() !== 'b') throw new Unusable('the Secret Service answered an unexpected Locked property');
    if (locked.u32() !== 0) throw new Unusable(LOCKED);
  });
  return outcome.status === 'done' ? { status: 'ready' } : unfinished(outcome, opts.timeoutMs);
}

/** Names of the accounts stored under `service`, from the items' attributes (service, username: see the library). */
export async function listSecretServiceAccounts(opts: SecretServiceOptions): Promise<string[] | ProbeResult> {
  const outcome = await withSessionBus(opts, async (bus) => {
    const { unlocked, locked } = await searchItems(bus, opts.service);
    const paths = [...unlocked, ...locked];
    const attributes = await Promise.all(paths.map((path) => bus.getProperty({ ...SECRETS, path }, 'org.freedesktop.Secret.Item', 'Attributes')));
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
 * Service.SearchItems(a{ss} attributes) → (ao unlocked, ao locked), the items of `service`. The call goes out
 * at once (before this function first awaits), so later calls pipeline behind it.
 */
async function searchItems(bus: SessionBus, service: string): Promise<{ unlocked: string[]; locked: string[] }> {
  const found = await bus.call(SECRETS, 'SearchItems', 'a{ss}', (m) => m.array(8, () => m.dictEntry('service', service)));
  const unlocked = found.objectPaths();
  return { unlocked, locked: found.objectPaths() };
}

function unfinished(outcome: Exclude<Outcome<unknown>, { status: 'done' }>, timeoutMs: number): ProbeResult {
  return outcome.status === 'timed-out' ? { status: 'unavailable', reason: keychainTimeoutReason(timeoutMs) } : outcome;
}

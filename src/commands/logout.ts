/** `idcli logout`: forget this profile's sign-in everywhere it may be stored. */
import { requireSetting } from '../config.js';
import type { CommandContext } from '../context.js';
import { LOCK_OPTIONS } from '../oauth/session.js';
import type { CredentialKey } from '../store/record.js';
import { lockPathFor, withLock } from '../store/lock.js';
import { allStores } from '../store/select.js';

export async function runLogout(ctx: CommandContext): Promise<void> {
  const { deps, settings } = ctx;
  const key: CredentialKey = {
    baseUrl: requireSetting(settings, 'baseUrl'),
    clientId: requireSetting(settings, 'clientId'),
    profile: settings.profile,
  };
  // Every store, not just the current one: a record written while the keychain was unavailable sits in the file
  // store and would otherwise outlive the logout.
  const stores = await allStores({
    configDir: settings.configDir,
    service: settings.keychainService,
    env: deps.env,
    warn: (m) => deps.log.warn(m),
  });
  // Under the refresh lock, so a refresh finishing right now cannot write the record back after we removed it.
  const removed = await withLock(
    lockPathFor(settings.configDir, key),
    async () => {
      const out: string[] = [];
      for (const store of stores) if (await store.delete(key)) out.push(store.describe());
      return out;
    },
    { ...LOCK_OPTIONS, signal: deps.signal },
  );
  deps.log.info(
    removed.length > 0
      ? `Signed out of profile ${settings.profile} (removed from ${removed.join(' and ')})`
      : `No stored sign-in for profile ${settings.profile}; nothing to remove`,
  );
}

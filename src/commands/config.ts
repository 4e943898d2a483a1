import { assertConfigKey, loadConfigFile, saveConfigFile, type SettingsSource, validateSetting } from '../config.js';

export interface ConfigTarget {
  /** Where the file is and which profile: nothing else is resolved, so a bad setting elsewhere can be fixed here. */
  settings: Pick<SettingsSource, 'configDir' | 'profile'>;
  stdout: NodeJS.WritableStream;
  warn?: (msg: string) => void;
}

export async function configSet(key: string, value: string, t: ConfigTarget): Promise<void> {
  const k = assertConfigKey(key);
  const checked = validateSetting(k, value);
  const profile = t.settings.profile();
  const file = await loadConfigFile(t.settings.configDir(), t);
  file.profiles[profile] = { ...file.profiles[profile], [k]: checked };
  await saveConfigFile(t.settings.configDir(), file, t);
}

export async function configGet(key: string, t: ConfigTarget): Promise<void> {
  const k = assertConfigKey(key);
  const file = await loadConfigFile(t.settings.configDir(), t);
  const value = file.profiles[t.settings.profile()]?.[k];
  // Like `git config --get`: an unset key prints nothing, so `$(idcli config get x)` is empty, not an error text.
  if (value !== undefined) t.stdout.write(`${value}\n`);
}

export async function configUnset(key: string, t: ConfigTarget): Promise<void> {
  const k = assertConfigKey(key);
  const profile = t.settings.profile();
  const file = await loadConfigFile(t.settings.configDir(), t);
  const entries = file.profiles[profile];
  if (!entries || entries[k] === undefined) return;
  delete entries[k];
  if (Object.keys(entries).length === 0) delete file.profiles[profile];
  await saveConfigFile(t.settings.configDir(), file, t);
}

export async function configList(t: ConfigTarget): Promise<void> {
  const file = await loadConfigFile(t.settings.configDir(), t);
  const entries = file.profiles[t.settings.profile()] ?? {};
  for (const [k, v] of Object.entries(entries)) t.stdout.write(`${k}=${v}\n`);
}

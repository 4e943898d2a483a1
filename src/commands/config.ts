import {
  assertConfigKey,
  loadConfigFile,
  profileName,
  saveConfigFile,
  validateSetting,
  type SettingFlags,
} from '../config.js';

export interface ConfigTarget {
  configDir: string;
  flags: SettingFlags;
  env: Record<string, string | undefined>;
  stdout: NodeJS.WritableStream;
  warn?: (msg: string) => void;
}

export async function configSet(key: string, value: string, t: ConfigTarget): Promise<void> {
  const k = assertConfigKey(key);
  const checked = validateSetting(k, value);
  const profile = profileName(t.flags, t.env);
  const file = await loadConfigFile(t.configDir, t);
  file.profiles[profile] = { ...file.profiles[profile], [k]: checked };
  await saveConfigFile(t.configDir, file, t);
}

export async function configGet(key: string, t: ConfigTarget): Promise<void> {
  const k = assertConfigKey(key);
  const file = await loadConfigFile(t.configDir, t);
  const value = file.profiles[profileName(t.flags, t.env)]?.[k];
  // Like `git config --get`: an unset key prints nothing, so `$(idcli config get x)` is empty, not an error text.
  if (value !== undefined) t.stdout.write(`${value}\n`);
}

export async function configUnset(key: string, t: ConfigTarget): Promise<void> {
  const k = assertConfigKey(key);
  const profile = profileName(t.flags, t.env);
  const file = await loadConfigFile(t.configDir, t);
  const entries = file.profiles[profile];
  if (!entries || entries[k] === undefined) return;
  delete entries[k];
  if (Object.keys(entries).length === 0) delete file.profiles[profile];
  await saveConfigFile(t.configDir, file, t);
}

export async function configList(t: ConfigTarget): Promise<void> {
  const file = await loadConfigFile(t.configDir, t);
  const entries = file.profiles[profileName(t.flags, t.env)] ?? {};
  for (const [k, v] of Object.entries(entries)) t.stdout.write(`${k}=${v}\n`);
}

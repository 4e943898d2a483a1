/**
 * The default `ui_locales` (OIDC Core §3.1.2.1) from LC_ALL > LC_MESSAGES > LANG: `fr_FR.UTF-8@euro` becomes
 * `fr-FR`; the C/POSIX locale names no language, so the server picks.
 */
const TAG_RE = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/;

export function uiLocalesFromEnv(env: Record<string, string | undefined>): string | undefined {
  const raw = [env.LC_ALL, env.LC_MESSAGES, env.LANG].find((v) => v !== undefined && v !== '');
  if (raw === undefined) return undefined;
  const base = raw.split(/[.@]/, 1)[0] ?? '';
  if (base === 'C' || base === 'POSIX' || base === '') return undefined;
  const tag = base.replace(/_/g, '-');
  return TAG_RE.test(tag) ? tag : undefined;
}

/** `idcli status`: who is signed in, with which settings, and where the credentials live. Never a secret. */
import { defineCommand, option } from '../../argv/define.js';
import { requireSetting } from '../../config.js';
import type { CommandContext } from '../../context.js';
import { notLoggedIn } from '../../errors.js';
import { openCredentials } from '../../oauth/credentials.js';
import { describeIdentity, type Identity, identityFromIdToken } from '../../oauth/jwt.js';
import { secondsLeft } from '../../oauth/session.js';
import { duration } from '../../duration.js';
import { printable } from '../../printable.js';
import type { CredentialStore } from '../../store/interface.js';
import type { CredentialRecord } from '../../store/record.js';

export interface StatusReport {
  profile: string;
  /** null only with IDCLI_ACCESS_TOKEN, which needs no sign-in setting. */
  baseUrl: string | null;
  clientId: string | null;
  signedIn: boolean;
  user: Identity | null;
  /** ISO 8601; null when no access token is stored. */
  expiresAt: string | null;
  expiresIn: number | null;
  expired: boolean | null;
  refreshToken: boolean;
  scope: string | null;
  /** Where the record lives, or "IDCLI_ACCESS_TOKEN" when that overrides the store. */
  store: string;
  storeKind: CredentialStore['kind'] | 'env';
}

export const command = defineCommand({
  name: 'status',
  summary: 'show who is signed in and where credentials are kept',
  description: 'Show who is signed in, with which settings, and where the credentials are stored.',
  options: { json: option.boolean({ flag: '--json', description: 'print the status as JSON' }) },
  examples: ['idcli status', 'idcli status --json | jq .signedIn'],
  async run(o, invocation) {
    const ctx = await invocation.context();
    const { report, expiryUnknown } = await statusOf(ctx);
    ctx.deps.stdout.write(o.json ? `${JSON.stringify(report, null, 2)}\n` : human(report, expiryUnknown));
    if (!report.signedIn) throw notLoggedIn();
  },
});

/** The report, and for a token from the environment why its expiry is unknown, when it is. */
async function statusOf(ctx: CommandContext): Promise<{ report: StatusReport; expiryUnknown?: string }> {
  const { deps, settings } = ctx;
  const credentials = await openCredentials(ctx);
  if (credentials.kind === 'env') {
    // A token from the environment is used without any sign-in setting, so status reports it without them too.
    const base = { profile: settings.profile, baseUrl: settings.baseUrl ?? null, clientId: settings.clientId ?? null };
    const expiry = { ...SIGNED_OUT, ...expiryOf(credentials.expiresAt, deps.now()) };
    const report: StatusReport = { ...base, ...expiry, signedIn: true, store: 'IDCLI_ACCESS_TOKEN', storeKind: 'env' };
    return { report, expiryUnknown: credentials.expiryUnknown };
  }
  const baseUrl = requireSetting(settings, 'baseUrl');
  const clientId = requireSetting(settings, 'clientId');
  const { session } = credentials;
  // Where the credentials are is what status is asked; a store other than the one expected is said out loud.
  if (session.store.notice !== undefined) deps.log.warn(session.store.notice);
  const { store } = session;
  const record = fromRecord(await session.read(), deps.now());
  return {
    report: { profile: settings.profile, baseUrl, clientId, ...record, store: store.describe(), storeKind: store.kind },
  };
}

type SignIn = Omit<StatusReport, 'profile' | 'baseUrl' | 'clientId' | 'store' | 'storeKind'>;
type Expiry = Pick<StatusReport, 'expiresAt' | 'expiresIn' | 'expired'>;
const NO_EXPIRY: Expiry = { expiresAt: null, expiresIn: null, expired: null };
const SIGNED_OUT: SignIn = { signedIn: false, user: null, ...NO_EXPIRY, refreshToken: false, scope: null };

function fromRecord(r: CredentialRecord | null, now: number): SignIn {
  if (!r || (r.accessToken === undefined && r.refreshToken === undefined)) return SIGNED_OUT;
  const id = identityFromIdToken(r.idToken);
  return {
    signedIn: true,
    user: Object.keys(id).length > 0 ? id : null,
    ...expiryOf(r.accessToken === undefined ? undefined : r.expiresAt, now),
    refreshToken: r.refreshToken !== undefined,
    scope: r.scope ?? null,
  };
}

function expiryOf(expiresAt: number | undefined, now: number): Expiry {
  if (expiresAt === undefined) return NO_EXPIRY;
  const iso = new Date(expiresAt).toISOString();
  return { expiresAt: iso, expiresIn: secondsLeft({ expiresAt }, now), expired: expiresAt <= now };
}

function human(s: StatusReport, expiryUnknown = 'not a JWT with an exp claim'): string {
  const rows: [string, string][] = [['Profile', s.profile]];
  if (s.baseUrl !== null) rows.push(['Base URL', s.baseUrl]);
  if (s.clientId !== null) rows.push(['Client id', s.clientId]);
  if (s.storeKind === 'env')
    rows.push(
      ['Signed in', 'using IDCLI_ACCESS_TOKEN (the stored sign-in is not used)'],
      ['Access token', s.expiresAt === null ? `expiry unknown (${expiryUnknown})` : accessLine(s)],
    );
  else if (!s.signedIn) rows.push(['Signed in', 'no']);
  else {
    rows.push(
      ['Signed in as', (s.user && describeIdentity(s.user)) ?? 'unknown (no readable ID token)'],
      ['Access token', accessLine(s)],
      ['Refresh token', s.refreshToken ? 'held' : 'none (sign in again when the access token expires)'],
    );
    if (s.scope !== null) rows.push(['Scope', s.scope]);
  }
  rows.push(['Credentials', s.store]);
  const width = Math.max(...rows.map(([k]) => k.length)) + 2;
  // Names and e-mail addresses come from the ID token, i.e. from the server: no control sequence reaches a terminal.
  return `${rows.map(([k, v]) => `${`${k}:`.padEnd(width)}${printable(v)}`).join('\n')}\n`;
}

function accessLine(s: StatusReport): string {
  if (s.expiresAt === null) return 'none';
  if (s.expired) return `expired at ${s.expiresAt}${s.refreshToken ? ' (`idcli token` refreshes it)' : ''}`;
  return `valid for ${duration((s.expiresIn ?? 0) * 1000, 'down', 'words')} (until ${s.expiresAt})`;
}

/**
 * The stored sign-in as a TokenSource: the cached token, else a Serial PKCE refresh under a cross-process lock, the
 * record read again after taking it: a refresh token sent twice looks like theft (RFC 9700 §4.14.2).
 */
import { clockOf } from '../clock.js';
import type { SessionContext } from '../context.js';
import type { TokenSource } from '../deps.js';
import { ExitCode, IdcliError, lockLost, notLoggedIn, signInRejected } from '../errors.js';
import { requireSetting } from '../config.js';
import type { CredentialStore } from '../store/interface.js';
import type { CredentialKey, CredentialRecord } from '../store/record.js';
import { allStores, openStore, type OpenStoreOptions } from '../store/select.js';
import { MIN_TTL_SEC } from '../token-rules.js';
import { refreshProof, usable, type UsableRecord, writtenSince } from './freshness.js';
import type { TokenSet } from './token-client.js';
export type { UsableRecord } from './freshness.js';

/** How a stop signal speaks of a refresh in flight (Deps.mustFinish). */
const REFRESH_TASK = {
  what: 'the token refresh',
  loses: 'the sign-in',
  fix: 'if the next `idcli token` says so, run `idcli login`',
} as const;

export async function openSession(ctx: SessionContext): Promise<Session> {
  const key = credentialKey(ctx);
  return new Session(ctx, await openStore(storeOptions(ctx)), key);
}

/** Remove this profile's sign-in from every store (a fallback record would outlive the logout); names them. */
export async function forgetSignIn(ctx: SessionContext): Promise<string[]> {
  const key = credentialKey(ctx);
  const stores = await allStores(storeOptions(ctx));
  // Under the refresh lock, so a refresh finishing right now cannot write the record back after we removed it.
  const removeAll = async () => {
    const removed: string[] = [];
    for (const store of stores) if (await store.delete(key)) removed.push(store.describe());
    return removed;
  };
  return underLock(ctx, key, removeAll, { store: stores.find((s) => s.withLock !== undefined) });
}

export function storeOptions({ settings, deps }: SessionContext): OpenStoreOptions {
  return {
    mode: settings.credentialStore,
    configDir: settings.configDir,
    service: settings.keychainService,
    warn: (msg) => deps.log.warn(msg),
    env: deps.env,
    clock: deps.clock,
    etcd: () => {
      const user = settings.etcdUser?.();
      if (user) deps.log.addSecret(user.password);
      return {
        endpoints: settings.etcdEndpoints?.() ?? [],
        prefix: settings.etcdPrefix,
        caCert: settings.etcdCaCert,
        cert: settings.etcdCert,
        key: settings.etcdKey,
        user,
        env: deps.env,
        log: deps.log,
        clock: clockOf(deps),
      };
    },
  };
}

function credentialKey({ settings }: SessionContext): CredentialKey {
  return {
    baseUrl: requireSetting(settings, 'baseUrl'),
    clientId: requireSetting(settings, 'clientId'),
    profile: settings.profile,
  };
}

interface UnderLockOptions<T> {
  /** A store that takes turns itself (etcd) holds the lock; else the lock file in the config directory. */
  store?: CredentialStore | undefined;
  onWait?: (lockPath: string) => void;
  deadline?: WaitDeadline | undefined;
  /** For a store's own lock: asked while waiting, a value ends the wait (what the holder stored). */
  whileWaiting?: () => Promise<T | undefined>;
}

/**
 * Throws the error `lost` builds unless this run still holds the lock: asked right before what the lock guards is
 * committed, by a run that may have been paused while another took the lock from it.
 */
type ConfirmLock = (lost: (lockPath: string) => Error) => Promise<void>;

/** The lock loads only when a refresh, a save or a logout needs it, not for a cached token. */
async function underLock<T>(
  ctx: SessionContext,
  key: CredentialKey,
  fn: (confirm: ConfirmLock) => Promise<T>,
  { store, onWait, deadline, whileWaiting }: UnderLockOptions<T> = {},
): Promise<T> {
  if (store?.withLock) {
    // Nothing to confirm: such a store's writes commit only while its lock is this run's (interface.ts).
    return store.withLock(key, () => fn(async () => {}), {
      signal: ctx.deps.signal,
      clock: clockOf(ctx.deps),
      ...(onWait && { onWait }),
      ...(whileWaiting && { whileWaiting }),
      ...(deadline && { waitLimit: deadline }),
    });
  }
  const { lockPathFor, withLock } = await import('../store/lock.js');
  const lockPath = lockPathFor(ctx.settings.configDir, key);
  return withLock(lockPath, (lease) => fn((lost) => lease.confirm(lost)), {
    signal: ctx.deps.signal,
    clock: clockOf(ctx.deps),
    onWait: onWait && (() => onWait(lockPath)),
    ...(deadline && { waitLimit: { at: deadline.at, error: (who) => deadline.error(who, lockPath) } }),
  });
}

interface WaitDeadline {
  at: number;
  error: (holder: string, lockPath: string) => Error;
}

function signInTimedOut(holder: string, lockPath: string): IdcliError {
  const who = holder === '' ? 'another idcli' : `another idcli (${holder})`;
  const message = `the sign-in timed out waiting for ${who} to finish with these credentials (${lockPath})`;
  return new IdcliError('SIGN_IN_LOCK_TIMED_OUT', message, ExitCode.AUTH, {
    hint: 'try again once it is done, or give login a longer --timeout',
  });
}

/** The lock was taken before anything was spent: running again is all it takes. */
function lockLostUnspent(lockPath: string, consequence: string): IdcliError {
  return lockLost(lockPath, ExitCode.USAGE, consequence, 'run the command again');
}

const notExpired = (lockPath: string) => lockLostUnspent(lockPath, 'the token was not marked expired');

/** The lock was taken while this run's refresh was in flight: the refresh token it sent is spent, its successor lost. */
function refreshLost(lockPath: string): IdcliError {
  const consequence = 'the refreshed sign-in was not saved; the refresh token it spent may leave the sign-in unusable';
  return lockLost(lockPath, ExitCode.AUTH, consequence, 'run `idcli token`; if it says so, run `idcli login`');
}

export class Session implements TokenSource {
  constructor(
    private readonly ctx: SessionContext,
    readonly store: CredentialStore,
    readonly key: CredentialKey,
  ) {}

  async read(): Promise<CredentialRecord | null> {
    const record = await this.store.read(this.key);
    if (record) remember(this.ctx, record);
    return record;
  }

  async get(minTtlSec = MIN_TTL_SEC): Promise<string> {
    return (await this.valid(minTtlSec)).accessToken;
  }

  async refresh(rejected: string): Promise<string> {
    // Another process may have refreshed since `rejected` was handed out; then its token is the answer.
    return (await this.locked((r): r is UsableRecord => r.accessToken !== rejected && this.fresh(r, 0))).accessToken;
  }

  /** `force` refreshes even a valid token, unless another process refreshed since this run started. */
  async valid(minTtlSec: number, force = false): Promise<UsableRecord> {
    if (!force) {
      // The common case takes no lock: reading is atomic, and a valid token needs no writer.
      const record = await this.read();
      if (!record) throw notLoggedIn();
      if (this.fresh(record, minTtlSec)) return record;
    }
    const changed = force ? await this.changedFromNow() : undefined;
    const record = await this.locked((r): r is UsableRecord =>
      changed ? changed(r) && this.fresh(r, 0) : this.fresh(r, minTtlSec),
    );
    if (!this.fresh(record, minTtlSec)) {
      this.ctx.deps.log.warn(
        `the new access token expires in ${secondsLeft(record, this.ctx.deps.now())} s, sooner than ${minTtlSec} s`,
      );
    }
    return record;
  }

  /**
   * A client was refused with the stored access token (git's `erase`): it is marked expired, so the next run refreshes
   * instead of serving it again; unless another process has stored a new one since (`rejected` is not stored).
   */
  async expire(rejected: string | undefined): Promise<void> {
    await this.withLock(async (confirm) => {
      const record = await this.read();
      const now = this.ctx.deps.now();
      if (!record || !this.fresh(record, 0) || (rejected !== undefined && record.accessToken !== rejected)) return;
      // Written back whole: over a record another run stored since, it would bring back a spent refresh token.
      await this.store.write(this.key, { ...record, expiresAt: now }, { beforeCommit: () => confirm(notExpired) });
    });
  }

  /** What tells a record another process wrote from now on (freshness.ts: a revision where the store has them). */
  private async changedFromNow(): Promise<(r: CredentialRecord) => boolean> {
    if (!this.store.revisioned) return writtenSince({ startedAt: this.ctx.deps.startedAt });
    const before = await this.read();
    if (!before) throw notLoggedIn();
    return writtenSince({ before });
  }

  /** Asked before the browser opens; the wait for the lock ends at `waitUntil` (deps.now() time). */
  async checkCanSave(waitUntil?: number): Promise<void> {
    const deadline = waitUntil === undefined ? undefined : { at: waitUntil, error: signInTimedOut };
    await this.withLock(() => this.store.checkWritable(this.key), deadline);
  }

  /** Save a code exchange's result (`login`), under the lock so a concurrent refresh cannot overwrite it. */
  async saveLogin(
    tokens: TokenSet,
    verifier: string,
    requestedScope: string,
    startedAt: number,
  ): Promise<CredentialRecord> {
    remember(this.ctx, tokens);
    return this.withLock(async () => {
      const previous = await this.store.read(this.key).catch(() => null);
      const record = nextRecord(this.ctx.deps.now(), tokens, verifier, startedAt, {
        scope: requestedScope,
        generation: previous?.generation ?? 0,
      });
      await this.store.write(this.key, record, { signIn: true });
      return record;
    });
  }

  private fresh(r: CredentialRecord, minTtlSec: number): r is UsableRecord {
    return usable(r, this.ctx.deps.now(), minTtlSec);
  }

  /** Run `fn` under this sign-in's lock, saying so under --verbose when another idcli holds it. */
  private async withLock<T>(
    fn: (confirm: ConfirmLock) => Promise<T>,
    deadline?: WaitDeadline,
    whileWaiting?: () => Promise<T | undefined>,
  ): Promise<T> {
    const onWait = (lockPath: string) =>
      this.ctx.deps.log.verbose(`waiting for another idcli to finish with these credentials (${lockPath})`);
    return underLock(this.ctx, this.key, fn, {
      store: this.store,
      onWait,
      deadline,
      ...(whileWaiting && { whileWaiting }),
    });
  }

  /** Take the lock, re-read, and refresh unless `usable` accepts what another process stored meanwhile. */
  private async locked(usable: (r: CredentialRecord) => r is UsableRecord): Promise<UsableRecord> {
    const { OAuthError } = await import('./token-client.js');
    // A fleet's waiters take what the holder stored as soon as it is there, without a turn of their own.
    const stored = async () => {
      const r = await this.read();
      return r && usable(r) ? r : undefined;
    };
    return this.withLock(
      async (confirm) => {
        let record = await this.read();
        if (!record) throw notLoggedIn();
        if (usable(record)) {
          this.ctx.deps.log.verbose('another idcli refreshed the token meanwhile; using its token');
          return record;
        }
        // The refresh token is spent once sent: a store that cannot take its successor must be found now.
        await this.store.checkWritable(this.key);
        await this.store.beforeRefresh?.(this.key);
        // One retry: a record replaced between our read and the server's refusal deserves a try with its own token.
        for (let attempt = 1; ; attempt++) {
          try {
            return await this.refreshWith(record, confirm);
          } catch (err) {
            if (!(err instanceof OAuthError && err.oauthError === 'invalid_grant')) throw err;
            const now = await this.read();
            if (now && now.generation !== record.generation && attempt < 2) {
              this.ctx.deps.log.verbose('refresh refused, but the stored sign-in changed meanwhile; using the new one');
              if (usable(now)) return now;
              record = now;
              continue;
            }
            // The refresh token is dead: keeping it would only make every later run fail the same way.
            if (now && now.generation === record.generation)
              await (this.store.reject ? this.store.reject(this.key) : this.store.delete(this.key));
            throw signInRejected();
          }
        }
      },
      undefined,
      stored,
    );
  }

  private async refreshWith(record: CredentialRecord, confirm: ConfirmLock): Promise<UsableRecord> {
    const { refreshToken, codeVerifier } = refreshProof(record);
    const [{ postTokenRequest, refreshGrantForm }, { createPkcePair }] = await Promise.all([
      import('./token-client.js'),
      import('./pkce.js'),
    ]);
    const next = createPkcePair();
    this.ctx.deps.log.addSecret(next.verifier);
    const startedAt = this.ctx.deps.now();
    const form = refreshGrantForm({
      refreshToken,
      clientId: this.key.clientId,
      codeVerifier,
      nextChallenge: next.challenge,
    });
    // A run paused since it read the record may no longer hold the lock: then another may have sent this token.
    await confirm((path) => lockLostUnspent(path, 'no refresh was sent'));
    // Not tied to Ctrl-C: once sent, the old refresh token is spent, so abandoning the answer would lose the sign-in.
    return this.ctx.deps.mustFinish(REFRESH_TASK, async () => {
      const tokens = await postTokenRequest(this.ctx, this.key.baseUrl, form, new AbortController().signal);
      remember(this.ctx, tokens);
      const saved = nextRecord(this.ctx.deps.now(), tokens, next.verifier, startedAt, record);
      // Saved over what the run that took the lock stored, this record would undo that run's refresh.
      await this.store.write(this.key, saved, { beforeCommit: () => confirm(refreshLost) });
      this.ctx.deps.log.verbose(`refreshed the access token (expires in ${tokens.expiresIn} s)`);
      return saved;
    });
  }
}

/** The next record, with the verifier of the challenge just sent even when the old refresh token is kept. */
function nextRecord(
  now: number,
  tokens: TokenSet,
  verifier: string,
  startedAt: number,
  previous: Partial<Pick<CredentialRecord, 'refreshToken' | 'idToken' | 'scope'>> & { generation: number },
): UsableRecord {
  return {
    version: 1,
    accessToken: tokens.accessToken,
    tokenType: tokens.tokenType,
    // expires_in counts from when the server answered (RFC 6749 §5.1); counting from when we asked errs early.
    expiresAt: startedAt + tokens.expiresIn * 1000,
    codeVerifier: verifier,
    refreshToken: tokens.refreshToken ?? previous.refreshToken,
    // OIDC Core §12.2: a refresh response may omit the ID token; the last one still names the user.
    idToken: tokens.idToken ?? previous.idToken,
    // RFC 6749 §5.1: scope is omitted when it equals the one requested.
    scope: tokens.scope ?? previous.scope,
    updatedAt: now,
    generation: previous.generation + 1,
  };
}

/** Keep the secrets of a record or a token response out of every log line. */
function remember(
  ctx: SessionContext,
  r: Pick<CredentialRecord, 'accessToken' | 'refreshToken' | 'idToken' | 'codeVerifier'>,
): void {
  for (const secret of [r.accessToken, r.refreshToken, r.idToken, r.codeVerifier]) ctx.deps.log.addSecret(secret);
}

export function secondsLeft(r: Pick<CredentialRecord, 'expiresAt'>, now: number): number {
  return r.expiresAt === undefined ? 0 : Math.max(0, Math.floor((r.expiresAt - now) / 1000));
}

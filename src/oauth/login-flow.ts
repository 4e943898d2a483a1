/** The sign-in: code + PKCE through the browser and a loopback listener (RFC 8252), then one atomic save. */
import { requireSetting } from '../config.js';
import type { SessionContext } from '../context.js';
import { type ErrorCode, ExitCode, IdcliError } from '../errors.js';
import type { CredentialStore } from '../store/interface.js';
import type { CredentialRecord } from '../store/record.js';
import { buildAuthorizeUrl, buildScope, type Prompt } from './authorize-url.js';
import { type CallbackResult, type CallbackServer, type PasteVerdict, startCallbackServer } from './callback-server.js';
import { describeIdentity, identityFromIdToken } from './jwt.js';
import { uiLocalesFromEnv } from './locale.js';
import { createPkcePair, createState, type PkcePair } from './pkce.js';
import { openSession, type Session } from './session.js';
import { codeGrantForm, postTokenRequest } from './token-client.js';
import { clockOf } from '../clock.js';

export interface LoginRequest {
  prompt?: Prompt;
  loginHint?: string;
  timeoutMs: number;
}

export interface LoginView {
  /** Show the authorization URL (and open the browser); `callback` is where the browser ends. */
  showAuthorizeUrl(url: string, callback: string): Promise<void>;
  /** Show the wait until `deadline` (deps.now() time), handing pasted addresses to `offer`; the result ends it. */
  showWaiting(deadline: number, offer: (address: string) => PasteVerdict): () => void;
}

export interface SignedIn {
  record: CredentialRecord;
  who: string | undefined;
  store: CredentialStore;
}

/** Run the sign-in to the end: the saved record, or the error that ended it (the browser is told either way). */
export async function signIn(ctx: SessionContext, request: LoginRequest, view: LoginView): Promise<SignedIn> {
  const { deps, settings } = ctx;
  const required = {
    baseUrl: requireSetting(settings, 'baseUrl'),
    clientId: requireSetting(settings, 'clientId'),
    clientName: requireSetting(settings, 'clientName'),
    redirectUri: requireSetting(settings, 'redirectUri'),
  };
  // The store must be able to take the sign-in before the browser opens, not fail after the user signed in.
  const session = await openSession(ctx);
  // --timeout covers the wait for another idcli's lock too.
  const deadline = deps.now() + request.timeoutMs;
  await session.checkCanSave(deadline);

  const pkce = createPkcePair();
  const state = createState();
  deps.log.addSecret(pkce.verifier);
  const server = await startCallbackServer({
    redirectUri: required.redirectUri,
    expectation: { state, issuer: settings.issuer ?? required.baseUrl },
    log: deps.log,
    clock: clockOf(deps),
  });
  try {
    const scope = buildScope(required.clientName, settings.scope);
    const attempt: Attempt = { ...required, redirectUri: server.redirectUri, scope, pkce, state };
    await view.showAuthorizeUrl(authorizeUrl(ctx, request, attempt), server.redirectUri);
    const record = await redeemResponse(ctx, session, attempt, server, { ...request, deadline }, view);
    const who = describeIdentity(identityFromIdToken(record.idToken));
    await server.close({
      ok: true,
      message: `${who ? `Signed in as ${who}. ` : 'Signed in. '}You can close this tab and return to the terminal.`,
    });
    return { record, who, store: session.store };
  } catch (err) {
    const failed = err instanceof IdcliError ? `The sign-in failed: ${err.message}.` : 'The sign-in did not complete.';
    await server.close({ ok: false, message: `${failed} Return to the terminal.` });
    throw err;
  }
}

/** What the authorization request and the code exchange of one sign-in must agree on. */
interface Attempt {
  baseUrl: string;
  clientId: string;
  redirectUri: string;
  scope: string;
  pkce: PkcePair;
  state: string;
}

function authorizeUrl({ settings, deps }: SessionContext, request: LoginRequest, attempt: Attempt): string {
  return buildAuthorizeUrl({
    ...attempt,
    codeChallenge: attempt.pkce.challenge,
    prompt: request.prompt,
    loginHint: request.loginHint,
    uiLocales: settings.uiLocales ?? uiLocalesFromEnv(deps.env),
  }).href;
}

/**
 * Waits for the authorization response and redeems its code. A pasted code refused as invalid_grant was likely cut
 * in the copy: the wait goes on. One from the browser itself ends the sign-in.
 */
async function redeemResponse(
  ctx: SessionContext,
  session: Session,
  attempt: Attempt,
  server: CallbackServer,
  request: LoginRequest & { deadline: number },
  view: LoginView,
): Promise<CredentialRecord> {
  for (;;) {
    const { result, pasted } = await awaitResponse(ctx, server, request.deadline, request.timeoutMs, view);
    const code = authorizationCode(result, request.prompt);
    try {
      return await redeemCode(ctx, session, attempt, code);
    } catch (err) {
      if (!pasted || !(err instanceof IdcliError) || err.oauthError !== 'invalid_grant') throw err;
      ctx.deps.log.warn(
        'the service refused the code of that address (invalid_grant): if it was cut off, paste all of it again; ' +
          "the browser's own return still counts",
      );
      server.reopen();
    }
  }
}

/** The first authorization response with our state, from the browser or pasted, by `deadline` or Ctrl-C. */
async function awaitResponse(
  { deps }: SessionContext,
  server: CallbackServer,
  deadline: number,
  timeoutMs: number,
  view: LoginView,
): Promise<{ result: CallbackResult; pasted: boolean }> {
  let pasted = false;
  const stopWaiting = view.showWaiting(deadline, (address) => {
    const verdict = server.offer(address);
    pasted ||= verdict.taken;
    return verdict;
  });
  try {
    return { result: await server.wait(deadline - deps.now(), deps.signal, timeoutMs), pasted };
  } finally {
    stopWaiting();
  }
}

/** Exchange the code, sending the next challenge (Serial PKCE), and save the sign-in under the lock. */
async function redeemCode(
  ctx: SessionContext,
  session: Session,
  attempt: Attempt,
  code: string,
): Promise<CredentialRecord> {
  const { deps } = ctx;
  deps.log.addSecret(code);
  const next = createPkcePair();
  deps.log.addSecret(next.verifier);
  const startedAt = deps.now();
  const form = codeGrantForm({
    code,
    clientId: attempt.clientId,
    redirectUri: attempt.redirectUri,
    codeVerifier: attempt.pkce.verifier,
    nextChallenge: next.challenge,
  });
  const tokens = await postTokenRequest(ctx, attempt.baseUrl, form, deps.signal);
  return session.saveLogin(tokens, next.verifier, attempt.scope, startedAt);
}

/** The code of a successful callback, or the error that ends the login (exit 3). */
function authorizationCode(result: CallbackResult, prompt: Prompt | undefined): string {
  if (result.kind === 'code') return result.code;
  if (result.kind === 'invalid') {
    const options = result.issuerMismatch ? { hint: 'check the issuer setting (IDCLI_ISSUER)' } : {};
    throw new IdcliError('SIGN_IN_CALLBACK_INVALID', `sign-in failed: ${result.reason}`, ExitCode.AUTH, options);
  }
  const { error } = result;
  const detail = result.description ? `: ${result.description}` : '';
  if (['login_required', 'interaction_required', 'consent_required'].includes(error)) {
    const how = prompt === 'none' ? 'without --prompt none to sign in interactively' : 'again';
    return fail(
      'SIGN_IN_NO_SESSION',
      `no single sign-on session to use (${error})`,
      error,
      `run \`idcli login\` ${how}`,
    );
  }
  if (error === 'access_denied') {
    const message = `sign-in was denied or cancelled (access_denied${detail})`;
    return fail('SIGN_IN_DENIED', message, error, 'run `idcli login` to try again');
  }
  return fail('SIGN_IN_REFUSED', `sign-in failed (${error}${detail})`, error);
}

function fail(code: ErrorCode, message: string, oauthError: string, hint?: string): never {
  throw new IdcliError(code, message, ExitCode.AUTH, { oauthError, hint });
}

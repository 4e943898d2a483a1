/**
 * `idcli login`: authorization code + PKCE through the user's browser and a loopback listener (RFC 8252), then
 * the code exchange with a new challenge (Serial PKCE) and one atomic save of everything the next refresh needs.
 */
import { openBrowser } from '../browser.js';
import { requireSetting } from '../config.js';
import type { CommandContext } from '../context.js';
import { ExitCode, IdcliError } from '../errors.js';
import { buildAuthorizeUrl, buildScope, type Prompt } from '../oauth/authorize-url.js';
import { type CallbackResult, startCallbackServer } from '../oauth/callback-server.js';
import { describeIdentity, identityFromIdToken } from '../oauth/jwt.js';
import { uiLocalesFromEnv } from '../oauth/locale.js';
import { createPkcePair, createState } from '../oauth/pkce.js';
import { openSession } from '../oauth/session.js';
import { codeGrantForm, postTokenRequest } from '../oauth/token-client.js';
import { showLoginWait } from '../output/login-wait.js';
import { liveLineWanted } from '../output/status-line.js';

export interface LoginOptions {
  prompt?: Prompt;
  loginHint?: string;
  /** false with --no-browser: only print the URL. */
  browser: boolean;
  timeoutSec: number;
}

export async function runLogin(opts: LoginOptions, ctx: CommandContext): Promise<void> {
  const { deps, settings } = ctx;
  const { log } = deps;
  const baseUrl = requireSetting(settings, 'baseUrl');
  const clientId = requireSetting(settings, 'clientId');
  const clientName = requireSetting(settings, 'clientName');
  const configuredRedirect = requireSetting(settings, 'redirectUri');
  // Open the store, and make sure it can take the sign-in, before the browser: a missing keychain or a read-only
  // credentials directory should fail now, not after the user signed in.
  const session = await openSession(ctx);
  await session.checkCanSave();

  const pkce = createPkcePair();
  const state = createState();
  log.addSecret(pkce.verifier);
  const server = await startCallbackServer({
    redirectUri: configuredRedirect,
    expectation: { state, issuer: settings.issuer ?? baseUrl },
    log,
  });
  let done = false;
  let failure = 'The sign-in did not complete. Return to the terminal.';
  try {
    const scope = buildScope(clientName, settings.scope);
    const url = buildAuthorizeUrl({
      baseUrl,
      clientId,
      redirectUri: server.redirectUri,
      scope,
      codeChallenge: pkce.challenge,
      state,
      ...(opts.prompt === undefined ? {} : { prompt: opts.prompt }),
      ...(opts.loginHint === undefined ? {} : { loginHint: opts.loginHint }),
      ...withUiLocales(settings.uiLocales ?? uiLocalesFromEnv(deps.env)),
    }).href;

    // Printed even with --quiet: without it a user whose browser did not open has no way to sign in.
    deps.stderr.write(
      opts.browser
        ? `Opening the browser to sign in. If it does not open, visit:\n\n  ${url}\n\n`
        : `Open this URL in a browser on this machine to sign in:\n\n  ${url}\n\n`,
    );
    if (opts.browser) await openBrowser(url, { env: deps.env, warn: (m) => log.warn(m) });

    const timeoutMs = opts.timeoutSec * 1000;
    // On a terminal a countdown that goes away with the callback; elsewhere (a pipe, CI) one plain line.
    const waiting = liveLineWanted(deps.stderr, deps.env, log.isQuiet)
      ? showLoginWait({ stream: deps.stderr, deadline: deps.now() + timeoutMs, now: () => deps.now(), messages: log })
      : undefined;
    if (!waiting) log.info(`Waiting for the sign-in (up to ${opts.timeoutSec} s; Ctrl-C to cancel)…`);
    let result: CallbackResult;
    try {
      result = await server.wait(timeoutMs, deps.signal);
    } finally {
      waiting?.stop();
    }
    const code = authorizationCode(result, opts.prompt);
    log.addSecret(code);

    const next = createPkcePair();
    log.addSecret(next.verifier);
    const startedAt = deps.now();
    const tokens = await postTokenRequest({
      baseUrl,
      form: codeGrantForm({
        code,
        clientId,
        redirectUri: server.redirectUri,
        codeVerifier: pkce.verifier,
        nextChallenge: next.challenge,
      }),
      signal: deps.signal,
      log,
      env: deps.env,
      deadlineMs: settings.httpTimeoutMs,
    });
    log.addSecret(tokens.accessToken);
    log.addSecret(tokens.refreshToken);
    log.addSecret(tokens.idToken);
    const record = await session.saveLogin(tokens, next.verifier, scope, startedAt);

    const who = describeIdentity(identityFromIdToken(record.idToken));
    await server.close({
      ok: true,
      message: `${who ? `Signed in as ${who}. ` : 'Signed in. '}You can close this tab and return to the terminal.`,
    });
    done = true;
    if (record.refreshToken === undefined)
      log.warn('the server sent no refresh token: `idcli login` will be needed again when the access token expires');
    const where = session.store.kind === 'keychain' ? 'OS keychain' : session.store.describe();
    log.info(`Signed in${who ? ` as ${who}` : ''} (profile ${settings.profile}; credentials in ${where})`);
  } catch (err) {
    if (err instanceof IdcliError) failure = `The sign-in failed: ${err.message}. Return to the terminal.`;
    throw err;
  } finally {
    if (!done) await server.close({ ok: false, message: failure });
  }
}

function withUiLocales(value: string | undefined): { uiLocales?: string } {
  return value === undefined || value === '' ? {} : { uiLocales: value };
}

/** The code of a successful callback, or the error that ends the login (exit 3). */
function authorizationCode(result: CallbackResult, prompt: Prompt | undefined): string {
  if (result.kind === 'code') return result.code;
  if (result.kind === 'invalid') {
    throw new IdcliError(
      `sign-in failed: ${result.reason}`,
      ExitCode.AUTH,
      result.issuerMismatch ? { hint: 'check the issuer setting (IDCLI_ISSUER)' } : {},
    );
  }
  const detail = result.description ? `: ${result.description}` : '';
  if (
    result.error === 'login_required' ||
    result.error === 'interaction_required' ||
    result.error === 'consent_required'
  ) {
    const hint =
      prompt === 'none'
        ? 'run `idcli login` without --prompt none to sign in interactively'
        : 'run `idcli login` again';
    return fail(`no single sign-on session to use (${result.error})`, result.error, hint);
  }
  if (result.error === 'access_denied')
    return fail(
      `sign-in was denied or cancelled (access_denied${detail})`,
      result.error,
      'run `idcli login` to try again',
    );
  return fail(`sign-in failed (${result.error}${detail})`, result.error);
}

function fail(message: string, oauthError: string, hint?: string): never {
  throw new IdcliError(message, ExitCode.AUTH, hint === undefined ? { oauthError } : { oauthError, hint });
}

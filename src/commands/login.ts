/** `idcli login`: the sign-in as the user sees it: the URL, the browser, the wait, then who signed in and where. */
import { openBrowser } from '../browser.js';
import type { CommandContext } from '../context.js';
import type { Prompt } from '../oauth/authorize-url.js';
import { type LoginView, signIn } from '../oauth/login-flow.js';
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
  const { log } = ctx.deps;
  const request = { prompt: opts.prompt, loginHint: opts.loginHint, timeoutMs: opts.timeoutSec * 1000 };
  const { record, who, store } = await signIn(ctx, request, loginView(opts, ctx));
  if (record.refreshToken === undefined)
    log.warn('the server sent no refresh token: `idcli login` will be needed again when the access token expires');
  const where = store.kind === 'keychain' ? 'OS keychain' : store.describe();
  log.info(`Signed in${who ? ` as ${who}` : ''} (profile ${ctx.settings.profile}; credentials in ${where})`);
}

/** What the user sees while the sign-in runs: the URL, the browser, and the wait. */
function loginView(opts: LoginOptions, { deps }: CommandContext): LoginView {
  const { log } = deps;
  return {
    async showAuthorizeUrl(url) {
      // Printed even with --quiet: without it a user whose browser did not open has no way to sign in.
      deps.stderr.write(
        opts.browser
          ? `Opening the browser to sign in. If it does not open, visit:\n\n  ${url}\n\n`
          : `Open this URL in a browser on this machine to sign in:\n\n  ${url}\n\n`,
      );
      if (opts.browser) await openBrowser(url, { env: deps.env, warn: (m) => log.warn(m) });
    },
    showWaiting(deadline) {
      // On a terminal a countdown that goes away with the callback; elsewhere (a pipe, CI) one plain line.
      if (liveLineWanted(deps.stderr, deps.env, log.isQuiet)) {
        const waiting = showLoginWait({ stream: deps.stderr, deadline, now: () => deps.now(), messages: log });
        return () => waiting.stop();
      }
      log.info(`Waiting for the sign-in (up to ${opts.timeoutSec} s; Ctrl-C to cancel)…`);
      return () => {};
    },
  };
}

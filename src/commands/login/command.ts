/** `idcli login`: the sign-in as the user sees it: the URL, the browser, the wait, then who signed in and where. */
import { defineCommand, type Invocation, option, type OptionsOf } from '../../argv/define.js';
import { openBrowser, whyNoBrowser } from '../../browser.js';
import type { CommandContext } from '../../context.js';
import { PROMPTS } from '../../oauth/authorize-url.js';
import { type LoginView, signIn } from '../../oauth/login-flow.js';
import { askForAddress } from '../../output/address-prompt.js';
import { showLoginWait } from '../../output/login-wait.js';
import { liveLineWanted } from '../../output/status-line.js';

const options = {
  prompt: option.choice({ flag: '--prompt', value: '<mode>', description: 'sign-in page behaviour', choices: PROMPTS }),
  loginHint: option.string({
    flag: '--login-hint',
    value: '<email>',
    description: 'pre-fill the email on the sign-in page',
  }),
  uiLocales: option.setting('ui-locales'),
  scope: option.setting('scope'),
  browser: option.negated({ flag: '--no-browser', description: 'do not open a browser; only print the sign-in URL' }),
  timeout: option.integer({
    flag: '--timeout',
    value: '<seconds>',
    description: 'how long to wait for the sign-in',
    defaultValue: 300,
    min: 1,
    max: 86400,
  }),
};
type LoginOptions = OptionsOf<typeof options>;

export const command = defineCommand({
  name: 'login',
  summary: 'sign in through the browser',
  description:
    'Sign in through the browser (OAuth 2.0 authorization code with PKCE) and store the credentials.\n' +
    'With a terminal on stdin, login also takes the address the browser ended on, pasted there: a browser on\n' +
    'another machine lands on a page that does not load. Over SSH or without a display it opens no browser\n' +
    'unless $BROWSER names one. Ctrl-C cancels.',
  options,
  examples: [
    'idcli login',
    'idcli login --no-browser            # print the URL, then paste the address the browser ended on',
    'idcli login --prompt login --login-hint alice@example.com',
    'idcli --profile staging login --timeout 120',
  ],
  async run(o, invocation) {
    const ctx = await invocation.context();
    const { log } = ctx.deps;
    const request = { prompt: o.prompt, loginHint: o.loginHint, timeoutMs: o.timeout * 1000 };
    const { record, who, store } = await signIn(ctx, request, loginView(o, ctx, invocation.stdin));
    if (record.refreshToken === undefined)
      log.warn('the server sent no refresh token: `idcli login` will be needed again when the access token expires');
    const where = store.kind === 'keychain' ? 'OS keychain' : store.describe();
    log.info(`Signed in${who ? ` as ${who}` : ''} (profile ${ctx.settings.profile}; credentials in ${where})`);
  },
});

/** What the user sees while the sign-in runs: the URL, the browser or the paste, and the wait. */
function loginView(opts: LoginOptions, { deps }: CommandContext, stdinOf: Invocation['stdin']): LoginView {
  const { log } = deps;
  const stdin = stdinOf();
  const canPaste = stdin.isTTY === true;
  let opening = false;
  return {
    async showAuthorizeUrl(url, callbackUri) {
      const noBrowser = opts.browser ? whyNoBrowser(deps.env) : undefined;
      opening = opts.browser && noBrowser === undefined;
      if (noBrowser !== undefined) log.info(`Not opening a browser: ${noBrowser}; set BROWSER to name one.`);
      // Printed even with --quiet: without it a user whose browser did not open has no way to sign in.
      deps.stderr.write(
        opening
          ? `Opening the browser to sign in. If it does not open, visit:\n\n  ${url}\n\n`
          : `Open this URL in a browser to sign in:\n\n  ${url}\n\n`,
      );
      if (opening) return openBrowser(url, { env: deps.env, warn: (m) => log.warn(m) });
      const { hostname, port } = new URL(callbackUri);
      deps.stderr.write(
        canPaste
          ? `A browser on another machine ends on a page that does not load (${callbackUri}?…): that is expected.\n`
          : `The browser must reach ${callbackUri} on this machine. From another machine, forward that port ` +
              `first (ssh -L ${port}:${hostname}:${port} <this host>), or run idcli login where a browser runs.\n`,
      );
    },
    showWaiting(deadline, offer) {
      // On a terminal a countdown that goes away with the callback; elsewhere (a pipe, CI) one plain line.
      if (!canPaste && liveLineWanted(deps.stderr, deps.env, log.isQuiet)) {
        const waiting = showLoginWait({ stream: deps.stderr, deadline, now: () => deps.now(), messages: log });
        return () => waiting.stop();
      }
      // No countdown while the question waits for an answer: a line redrawn every second would overwrite what is
      // typed on the cursor's row. The time left is said once instead.
      log.info(`Waiting for the sign-in (up to ${opts.timeout} s; Ctrl-C to cancel)…`);
      if (!canPaste) return () => {};
      const prompt = askForAddress({
        input: stdin,
        output: deps.stderr,
        erase: deps.env.TERM !== 'dumb',
        question: opening ? 'Or paste the address the browser ended on:' : 'Paste the address the browser ended on:',
        take: (line) => {
          const verdict = offer(line);
          return verdict.taken ? undefined : verdict.reason;
        },
        messages: log,
      });
      return () => prompt.stop();
    },
  };
}

import { defineCommand, option } from '../argv/define.js';

export const login = defineCommand({
  name: 'login',
  summary: 'sign in through the browser',
  description:
    'Sign in through the browser (OAuth 2.0 authorization code with PKCE) and store the credentials.\n' +
    'With a terminal on stdin, login also takes the address the browser ended on, pasted there: a browser on\n' +
    'another machine lands on a page that does not load. Over SSH or without a display it opens no browser\n' +
    'unless $BROWSER names one. Ctrl-C cancels.',
  options: () => ({
    prompt: option.choice({
      flag: '--prompt',
      value: '<mode>',
      description: 'sign-in page behaviour',
      choices: ['none', 'login', 'create'],
    }),
    loginHint: option.string({
      flag: '--login-hint',
      value: '<email>',
      description: 'pre-fill the email on the sign-in page',
    }),
    // Settings: read through the context, like their environment variables and config keys.
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
  }),
  examples: [
    'idcli login',
    'idcli login --no-browser            # print the URL, then paste the address the browser ended on',
    'idcli login --prompt login --login-hint alice@example.com',
    'idcli --profile staging login --timeout 120',
  ],
  async run(o, inv) {
    const { runLogin } = await import('../commands/login.js');
    const { prompt, loginHint, browser, timeout } = o;
    await runLogin({ prompt, loginHint, browser, timeoutSec: timeout }, await inv.context(), { stdin: inv.stdin });
  },
});

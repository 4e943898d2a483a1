import { defineCommand, option } from '../argv/define.js';

export const login = defineCommand({
  name: 'login',
  summary: 'sign in through the browser',
  description:
    'Sign in through the browser (OAuth 2.0 authorization code with PKCE) and store the credentials.\n' +
    'On a terminal, a line counts down the time left until --timeout while the browser is out; Ctrl-C cancels.',
  options: {
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
  },
  examples: [
    'idcli login',
    'idcli login --no-browser            # print the URL to open in any browser of this machine',
    'idcli login --prompt login --login-hint alice@example.com',
    'idcli --profile staging login --timeout 120',
  ],
  async run(o, inv) {
    const { runLogin } = await import('../commands/login.js');
    const { prompt, loginHint, browser, timeout } = o;
    await runLogin({ prompt, loginHint, browser, timeoutSec: timeout }, await inv.context(), { stdin: inv.stdin });
  },
});
